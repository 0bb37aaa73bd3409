"""Shared steps of the erasure tests: remembering, filing, running the cascade in process."""

from __future__ import annotations

from typing import Any

from app.erasure import tasks

SUBJECT = "user:42"


def remember(client: Any, headers: dict[str, str], subject: str, text: str,
             **fields: Any) -> str:
    extra = {"Idempotency-Key": fields.pop("idempotency_key")} if "idempotency_key" in fields \
        else {}
    response = client.post("/v1/memories", json={"subject": subject, "text": text, **fields},
                           headers={**headers, **extra})
    assert response.status_code in (200, 201), response.text
    memory_id: str = response.json()["id"]
    return memory_id


def file(client: Any, headers: dict[str, str], subject: str = SUBJECT, **fields: Any
         ) -> dict[str, Any]:
    response = client.post("/v1/erasure-requests", json={"subject": subject, **fields},
                           headers=headers)
    assert response.status_code in (200, 202), response.text
    body: dict[str, Any] = response.json()
    assert response.headers["Location"] == f"/v1/erasure-requests/{body['id']}"
    return body


def run(request_id: str, tenant_id: str) -> str:
    """The cascade task, called in process as a worker would run it."""
    outcome: str = tasks.run(request_id, tenant_id)
    return outcome


def status(client: Any, headers: dict[str, str], request_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/erasure-requests/{request_id}", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body
