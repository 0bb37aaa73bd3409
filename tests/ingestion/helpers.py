from __future__ import annotations

import base64
import json
import uuid
from typing import Any

REPLAYED = "Idempotent-Replayed"
SUBJECT = "user:7"


def ingest(api: Any, headers: dict[str, str], key: str | None, body: dict[str, Any]) -> Any:
    extra = {"Idempotency-Key": key} if key is not None else {}
    return api.post("/v1/ingest", json=body, headers={**headers, **extra})


def accepted(api: Any, headers: dict[str, str], key: str, body: dict[str, Any]) -> str:
    response = ingest(api, headers, key, body)
    assert response.status_code == 202, response.text
    operation_id: str = response.json()["operation_id"]
    return operation_id


def operation(owner_conn: Any, operation_id: str) -> dict[str, Any]:
    """The row, its payload opened with its subject's key (`stored_payload`: as stored)."""
    from app.idempotency import sealing

    row = owner_conn.execute(
        "SELECT status, result, error, request_payload, response_status, tenant_id "
        "FROM operation WHERE id = %s", (operation_id,)).fetchone()
    assert row is not None, "no such operation"
    return {"status": row[0], "result": row[1], "error": row[2],
            "request_payload": sealing.open_payload(row[5], uuid.UUID(operation_id), row[3]),
            "stored_payload": row[3], "response_status": row[4]}


def operation_text(owner_conn: Any) -> str:
    """Every operation row as text: what a leak of memory text would show up in."""
    return " ".join(row[0] for row in owner_conn.execute("SELECT o::text FROM operation o"))


def memory_ids(owner_conn: Any, tenant_id: str) -> list[str]:
    return [str(row[0]) for row in owner_conn.execute(
        "SELECT id FROM memory WHERE tenant_id = %s ORDER BY id", (tenant_id,))]


def sent_for(owner_conn: Any, operation_id: str, task: str = "ingestion.apply") -> int:
    """How many ``task`` messages for this operation the broker tables hold."""
    exists = owner_conn.execute("SELECT to_regclass('kombu_message')").fetchone()[0]
    if exists is None:
        return 0
    count = 0
    for (payload,) in owner_conn.execute("SELECT payload FROM kombu_message"):
        envelope = json.loads(payload)
        if envelope.get("headers", {}).get("task") != task:
            continue
        body = envelope["body"]
        if envelope.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body).decode()
        args = json.loads(body)[0]
        count += args[0] == operation_id
    return count


def item_id(operation_id: str, index: int) -> str:
    return str(uuid.uuid5(uuid.UUID(operation_id), f"item:{index}"))


def task_ids_for(owner_conn: Any, operation_id: str) -> list[str]:
    """Celery task IDs of the `ingestion.apply` messages sent for this operation."""
    found: list[str] = []
    for (payload,) in owner_conn.execute("SELECT payload FROM kombu_message ORDER BY id"):
        envelope = json.loads(payload)
        headers = envelope.get("headers", {})
        if headers.get("task") == "ingestion.apply" and operation_id in headers.get(
            "argsrepr", ""
        ) and headers["id"] not in found:
            found.append(headers["id"])
    return found
