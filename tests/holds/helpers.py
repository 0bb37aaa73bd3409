"""Shared steps of the legal-hold tests."""

from __future__ import annotations

from typing import Any

from tests import sealed

SUBJECT = "user:held"


def remember(client: Any, tenant: dict[str, Any], text: str, *, subject: str = SUBJECT,
             **extra: Any) -> str:
    response = client.post("/v1/memories", json={"subject": subject, "text": text, **extra},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id


def hold(client: Any, tenant: dict[str, Any], **scope: Any) -> dict[str, Any]:
    response = client.post("/v1/legal-holds", json={"reason": "litigation", **scope},
                           headers=tenant["compliance"])
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def release(client: Any, tenant: dict[str, Any], hold_id: str) -> None:
    response = client.delete(f"/v1/legal-holds/{hold_id}", headers=tenant["compliance"])
    assert response.status_code == 204, response.text


def state(owner_conn: Any, memory_id: str) -> str:
    row = owner_conn.execute("SELECT state FROM memory WHERE id = %s", (memory_id,)).fetchone()
    assert row is not None
    found: str = row[0]
    return found


def texts(owner_conn: Any, memory_id: str) -> list[str]:
    return sealed.texts(owner_conn, "m.id = %s", (memory_id,))
