"""Idempotency: the one place that decides whether a mutation runs, replays or is refused.

A request with an ``Idempotency-Key`` takes a transaction-scoped advisory lock on
(tenant, key) inside the request's own transaction. The operation record is written in that
same transaction together with the effect, so "done" and "recorded" can never disagree, and
a crash mid-request rolls back both and releases the lock.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlmodel import Session

from app.core.errors import IdempotencyInProgress, IdempotencyKeyReused, NotFound
from app.core.models import utcnow
from app.idempotency import sealing, store
from app.idempotency.keys import (
    ID_NAMESPACE,
    Claim,
    Replay,
    derive_id,
    request_digest,
    validate_key,
)
from app.idempotency.models import Operation

__all__ = ["ID_NAMESPACE", "Claim", "Replay", "claim", "derive_id", "prune", "read", "record",
           "request_digest", "validate_key"]

REPLAYED_HEADER = "Idempotent-Replayed"
REPLAYABLE_HEADERS = ("etag", "location")


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
    record = store.by_key(session, tenant_id=tenant_id, key=key)
    now = now or utcnow()
    if record is not None and record.expires_at <= now:
        store.remove(session, record)
        record = None
    if record is None:
        return Claim(tenant_id=tenant_id, key=key, digest=digest, method=method, path=path,
                     kind=kind, body=body)
    if record.request_digest != digest:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was used with a different request; choose a new key."
        )
    if record.response_status is None:
        raise IdempotencyInProgress("The operation accepted with this key has not answered yet.")
    return Replay(
        status=record.response_status,
        body=sealing.open_answer(tenant_id, key, record.response_body),
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
    names: Sequence[uuid.UUID] = (),
    subject: str | None = None,
) -> None:
    """Store the answer beside the effect, in the request's transaction (into the job the
    request accepted, when it accepted one with this key), sealed under the key of the
    subject it is about (``subject``, else the request's or the answer's own); ``names``:
    the memories it shows beyond its `id`."""
    kept = {name: value for name, value in headers.items() if name.lower() in REPLAYABLE_HEADERS}
    about = sealing.subject_of(claim.body, subject, body)
    sealed = sealing.seal_answer(claim.tenant_id, claim.key, body, subject=about)
    store.save_answer(session, claim, api_key_id=api_key_id, status=status, body=sealed,
                      headers=kept, retention=retention, names=names)


def read(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> Operation:
    """An operation of this tenant; `NotFound` for another tenant's or none."""
    operation = store.get(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None:
        raise NotFound("No such operation.")
    return operation


def prune(session: Session, *, now: datetime | None = None) -> int:
    """Delete the current tenant's expired, finished records (under row-level security)."""
    return store.prune(session, now=now or utcnow())
