"""Idempotency: the one place that decides whether a mutation runs, replays or is refused.

A request with an ``Idempotency-Key`` takes a transaction-scoped advisory lock on
(tenant, key) inside the request's own transaction. The operation record is written in that
same transaction together with the effect, so "done" and "recorded" can never disagree, and
a crash mid-request rolls back both and releases the lock.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, text
from sqlmodel import Session, select

from app.core.errors import IdempotencyInProgress, IdempotencyKeyReused, InvalidIdempotencyKey
from app.core.models import utcnow
from app.idempotency.models import Operation, OperationStatus

# Stable namespace: IDs derived from (tenant, key) must never change across releases.
ID_NAMESPACE = uuid.UUID("6f1c1b1e-3d0a-4c59-9d5e-6c2f0e1a7b42")
REPLAYED_HEADER = "Idempotent-Replayed"
REPLAYABLE_HEADERS = ("etag", "location")


@dataclass(frozen=True)
class Claim:
    """A key this request now holds; the record is written when the request succeeds."""

    tenant_id: uuid.UUID
    key: str
    digest: str
    method: str
    path: str
    kind: str

    def derived_id(self, kind: str | None = None) -> uuid.UUID:
        return derive_id(self.tenant_id, self.key, kind or self.kind)


@dataclass(frozen=True)
class Replay:
    status: int
    body: Any
    headers: dict[str, str]


def validate_key(key: str) -> str:
    if not 1 <= len(key) <= 255 or not all(" " <= ch <= "~" for ch in key):
        raise InvalidIdempotencyKey("Idempotency-Key must be 1 to 255 printable ASCII characters.")
    return key


def derive_id(tenant_id: uuid.UUID, key: str, kind: str) -> uuid.UUID:
    """The ID a create with this key gets — the same however late a redelivery arrives."""
    return uuid.uuid5(ID_NAMESPACE, f"{tenant_id}:{kind}:{key}")


def request_digest(method: str, path: str, body: bytes) -> str:
    try:
        canonical: bytes = json.dumps(
            json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8") if body.strip() else b""
    except (ValueError, UnicodeDecodeError):
        canonical = body
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), canonical):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def claim(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    key: str,
    method: str,
    path: str,
    body: bytes,
    kind: str,
    now: datetime | None = None,
) -> Claim | Replay:
    """Hold the key for this transaction, or say what the first request answered."""
    key = validate_key(key)
    digest = request_digest(method, path, body)
    locked = session.execute(
        text("SELECT pg_try_advisory_xact_lock(hashtextextended(:lock_key, 0))"),
        {"lock_key": f"idempotency:{tenant_id}:{key}"},
    ).scalar_one()
    if not locked:
        raise IdempotencyInProgress("The first request with this Idempotency-Key is still running.")
    record = session.exec(
        select(Operation).where(Operation.tenant_id == tenant_id, Operation.idempotency_key == key)
    ).first()
    now = now or utcnow()
    if record is not None and record.expires_at <= now:
        session.delete(record)
        session.flush()
        record = None
    if record is None:
        return Claim(tenant_id=tenant_id, key=key, digest=digest, method=method, path=path,
                     kind=kind)
    if record.request_digest != digest:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was used with a different request; choose a new key."
        )
    if record.response_status is None:
        raise IdempotencyInProgress("The operation accepted with this key has not answered yet.")
    return Replay(
        status=record.response_status,
        body=record.response_body,
        headers=dict(record.response_headers or {}),
    )


def record(
    session: Session,
    claim: Claim,
    *,
    api_key_id: uuid.UUID | None,
    status: int,
    body: Any,
    headers: dict[str, str],
    retention: timedelta,
    operation_id: uuid.UUID | None = None,
    operation_status: OperationStatus = OperationStatus.succeeded,
) -> Operation:
    """Store the answer beside the effect, in the request's transaction."""
    now = utcnow()
    kept = {name: value for name, value in headers.items() if name.lower() in REPLAYABLE_HEADERS}
    existing = session.get(Operation, operation_id) if operation_id else None
    operation = existing or Operation(
        id=operation_id or uuid.uuid4(),
        tenant_id=claim.tenant_id,
        kind=claim.kind,
        request_method=claim.method,
        request_path=claim.path,
        request_digest=claim.digest,
        status=operation_status,
    )
    operation.api_key_id = api_key_id
    operation.idempotency_key = claim.key
    operation.kind = claim.kind
    operation.request_method = claim.method
    operation.request_path = claim.path
    operation.request_digest = claim.digest
    operation.response_status = status
    operation.response_body = body
    operation.response_headers = kept
    operation.updated_at = now
    operation.expires_at = now + retention
    session.add(operation)
    session.flush()
    return operation


def prune(session: Session, *, now: datetime | None = None) -> int:
    """Delete the current tenant's expired, finished records (under row-level security)."""
    finished = (OperationStatus.succeeded, OperationStatus.failed)
    result = session.execute(
        delete(Operation).where(
            Operation.expires_at <= (now or utcnow()),  # type: ignore[arg-type]
            Operation.status.in_(finished),  # type: ignore[attr-defined]
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)
