"""Stored answers and job payloads, sealed under the data key of the subject they are about.

A stored answer keeps in clear only what the database reads in it: its `id` (a forget finds
the answers to redact by it), a batch's item statuses and memory IDs (redacted item by item),
and `shows`, the IDs the answer shows anywhere (an erasure finds the answers showing an erased
memory by them). Everything else is one sealed value (`app/keys/sealed_json.py`): under the
request's subject, so that an erasure's key destruction leaves no copy of it readable; item by
item under each item's subject for a batch of several; under the tenant's sealing key for an
answer about no subject. An answer whose key was destroyed replays in the erased form,
`{"id", "state": "forgotten"}`, as an erasure's redaction would have left it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from app.keys import sealed_json
from app.keys.errors import KeyDestroyed
from app.keys.subjects import row_aad

SHOWS = "shows"
ERASED_STATE = "forgotten"


def aad(tenant_id: uuid.UUID, idempotency_key: str, column: str, part: str = "") -> bytes:
    """Bound to the tenant's record of that key: a stored answer moved to another key's
    record, or another tenant's, does not open."""
    return b"\0".join((b"lethe/v1", b"operation", str(tenant_id).encode(),
                       idempotency_key.encode(), column.encode(), part.encode()))


def subject_of(request_body: bytes, hint: str | None, answer: Any) -> str | None:
    """Whom an answer is about: the route's word (``hint``: a query parameter or what the
    route set), else the request's or the answer's own `subject`; None for an answer about
    no one subject (a batch of several, a tenant's settings)."""
    if hint is not None:
        return hint
    for document in (_json(request_body), answer):
        if isinstance(document, dict) and isinstance(document.get("subject"), str):
            return str(document["subject"])
    return None


def seal_answer(tenant_id: uuid.UUID, idempotency_key: str, body: Any, *,
                subject: str | None) -> Any:
    if body is None:
        return None
    column = aad(tenant_id, idempotency_key, "response_body")
    if subject is None and _is_batch(body):
        return {**{k: v for k, v in body.items() if k != "results"},
                "results": [_sealed_item(tenant_id, column, index, item)
                            for index, item in enumerate(body["results"])]}
    skeleton: dict[str, Any] = {}
    if isinstance(body, dict) and "id" in body:
        skeleton["id"] = body["id"]
    shown = sorted(_shown_ids(body))
    if shown:
        skeleton[SHOWS] = shown
    return {**skeleton, **sealed_json.seal(tenant_id, subject, body, aad=column)}


def open_answer(tenant_id: uuid.UUID, idempotency_key: str, stored: Any) -> Any:
    """The answer as first given (a stored answer from before sealing comes back as is)."""
    column = aad(tenant_id, idempotency_key, "response_body")
    if sealed_json.is_sealed(stored):
        try:
            return sealed_json.open_value(tenant_id, stored, aad=column)
        except KeyDestroyed:
            return {"id": stored.get("id"), "state": ERASED_STATE}
    if _is_batch(stored):
        return {**stored, "results": [_opened_item(tenant_id, column, index, item)
                                      for index, item in enumerate(stored["results"])]}
    return stored


def seal_payload(tenant_id: uuid.UUID, operation_id: uuid.UUID,
                 payload: dict[str, Any]) -> dict[str, Any]:
    """A job's payload, under its `subject`'s key when it names one."""
    subject = payload.get("subject")
    return sealed_json.seal(tenant_id, subject if isinstance(subject, str) else None, payload,
                            aad=_payload_aad(operation_id))


def open_payload(tenant_id: uuid.UUID, operation_id: uuid.UUID,
                 stored: dict[str, Any] | None) -> dict[str, Any] | None:
    """The payload; None when there is none, or its subject's key is gone."""
    if stored is None or not sealed_json.is_sealed(stored):
        return stored
    try:
        opened = sealed_json.open_value(tenant_id, stored, aad=_payload_aad(operation_id))
    except KeyDestroyed:
        return None
    return dict(opened)


def _payload_aad(operation_id: uuid.UUID) -> bytes:
    return row_aad("operation", operation_id, "request_payload")


def _sealed_item(tenant_id: uuid.UUID, column: bytes, index: int, item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    memory = item.get("memory")
    subject = memory.get("subject") if isinstance(memory, dict) else None
    skeleton: dict[str, Any] = {"status": item.get("status")}
    if isinstance(memory, dict) and "id" in memory:
        skeleton["memory"] = {"id": memory["id"]}
    return {**skeleton, **sealed_json.seal(
        tenant_id, subject if isinstance(subject, str) else None, item,
        aad=column + b"\0" + str(index).encode())}


def _opened_item(tenant_id: uuid.UUID, column: bytes, index: int, item: Any) -> Any:
    if not sealed_json.is_sealed(item):
        return item  # redacted ({"status", "memory": {"id", "state"}}) or stored before sealing
    try:
        return sealed_json.open_value(tenant_id, item, aad=column + b"\0" + str(index).encode())
    except KeyDestroyed:
        return {"status": item.get("status"),
                "memory": {**item.get("memory", {}), "state": ERASED_STATE}}


def _is_batch(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("results"), list) and "id" not in body


def _shown_ids(node: Any) -> set[str]:
    """Every `id` of an object anywhere in ``node``: recall answers show memories nested."""
    found: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("id"), str):
            found.add(node["id"])
        for value in node.values():
            found |= _shown_ids(value)
    elif isinstance(node, list):
        for value in node:
            found |= _shown_ids(value)
    return found


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None
