from __future__ import annotations

from typing import Any


def remember(client: Any, headers: dict[str, str], **body: Any) -> Any:
    body.setdefault("subject", "user:42")
    body.setdefault("text", "Lives in Lisbon.")
    return client.post("/v1/memories", json=body, headers=headers)


def created(client: Any, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    response = remember(client, headers, **body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def count(owner_conn: Any, table: str) -> int:
    value: int = owner_conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return value
