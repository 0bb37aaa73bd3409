"""The `operation` table: the one module that reads and writes its rows.

An operation row is an idempotency record (a mutation's stored answer), an accepted job (its
status, payload and result), or both at once: a job accepted with an Idempotency-Key is the
record that key replays. Services decide; this module holds the SQL.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, func, select

from app.core.config import get_settings
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.idempotency import sealing
from app.idempotency.keys import Claim, derive_id, request_digest
from app.idempotency.models import Operation, OperationMemory, OperationStatus

FINISHED = (OperationStatus.succeeded, OperationStatus.failed)
PENDING = (OperationStatus.queued, OperationStatus.running)
# The task of each kind of accepted job, named by the service that accepts it (`job_kind`):
# `accept_job` sends it, and the requeue sweep sends it again when its message was lost.
JOB_TASKS: dict[str, str] = {}


def job_kind(kind: str, task: str) -> str:
    """Register ``kind`` as a job whose task is ``task``; returns ``kind``."""
    JOB_TASKS[kind] = task
    return kind


def _retention() -> timedelta:
    return timedelta(days=get_settings().idempotency_retention_days)


# -- jobs ---------------------------------------------------------------------------------------


def accept_job(
    session: Session,
    kind: str,
    payload: dict[str, Any],
    *,
    tenant_id: uuid.UUID,
    method: str,
    path: str,
    claim: Claim | None = None,
    api_key_id: uuid.UUID | None = None,
) -> Operation:
    """A queued job: its operation row now, and its task (the one registered for ``kind``,
    with the operation's and the tenant's IDs) sent once the unit of work commits.

    With ``claim`` the row is also the request's idempotency record: its ID is derived from
    the key (the same however late the key comes back) and the request's answer is written
    into it. Without one it is no idempotency record, and its digest is that of its method,
    path and payload, computed as a keyed request's would be.
    """
    now = utcnow()
    if claim is not None:
        operation_id = derive_id(claim.tenant_id, claim.key, kind)
        digest, key = claim.digest, claim.key
    else:
        operation_id = uuid.uuid4()
        digest, key = request_digest(method, path, json.dumps(payload).encode()), None
    operation = Operation(
        id=operation_id, tenant_id=tenant_id, api_key_id=api_key_id, idempotency_key=key,
        kind=kind, request_method=method, request_path=path, request_digest=digest,
        status=OperationStatus.queued, created_at=now,
        request_payload=sealing.seal_payload(tenant_id, operation_id, payload),
        updated_at=now, expires_at=now + _retention(),
    )
    session.add(operation)
    session.flush()
    enqueue_job(JOB_TASKS[kind], operation.id, tenant_id)
    return operation


def lock_job(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, kind: str | None = None
) -> Operation | None:
    """The job's row, locked for this transaction (two deliveries never run it at once) and
    read as it is once locked; None when there is none (of ``kind``)."""
    query = select(Operation).where(Operation.id == operation_id,
                                    Operation.tenant_id == tenant_id)
    if kind is not None:
        query = query.where(Operation.kind == kind)
    return session.exec(
        query.with_for_update().execution_options(populate_existing=True)
    ).first()


def payload_of(operation: Operation) -> dict[str, Any] | None:
    """The job's payload as accepted; None once applied, or when an erasure took it."""
    return sealing.open_payload(operation.tenant_id, operation.id, operation.request_payload)


def mark_running(session: Session, operation: Operation) -> None:
    _save(session, operation, status=OperationStatus.running)


def record_progress(session: Session, operation: Operation, result: dict[str, Any]) -> None:
    """A committed step's result so far; the job stays running."""
    _save(session, operation, status=OperationStatus.running, result=result)


def succeed(session: Session, operation: Operation, result: dict[str, Any]) -> None:
    """Finish the job with ``result``; its payload (which may hold memory text) goes."""
    _save(session, operation, status=OperationStatus.succeeded, result=result, error=None,
          request_payload=None)


def fail(session: Session, operation: Operation, error: dict[str, Any]) -> None:
    """Finish the job with a content-free ``error``; its payload goes."""
    _save(session, operation, status=OperationStatus.failed, error=error,
          request_payload=None)


def _save(session: Session, operation: Operation, **values: Any) -> None:
    for name, value in values.items():
        setattr(operation, name, value)
    operation.updated_at = utcnow()
    session.add(operation)
    session.flush()


def stale_jobs(
    session: Session, *, tenant_id: uuid.UUID, before: datetime
) -> list[tuple[uuid.UUID, str]]:
    """Jobs still pending that nothing has touched since ``before``, with their tasks."""
    rows = session.exec(
        select(Operation.id, Operation.kind).where(
            Operation.tenant_id == tenant_id, col(Operation.kind).in_(list(JOB_TASKS)),
            col(Operation.status).in_(PENDING), col(Operation.updated_at) < before,
        ).order_by(col(Operation.updated_at))
    ).all()
    return [(operation_id, JOB_TASKS[kind]) for operation_id, kind in rows]


def get(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> Operation | None:
    operation = session.get(Operation, operation_id)
    return operation if operation is not None and operation.tenant_id == tenant_id else None


# -- idempotency records ------------------------------------------------------------------------


def by_key(session: Session, *, tenant_id: uuid.UUID, key: str) -> Operation | None:
    return session.exec(
        select(Operation).where(Operation.tenant_id == tenant_id,
                                Operation.idempotency_key == key)
    ).first()


def remove(session: Session, operation: Operation) -> None:
    session.delete(operation)
    session.flush()


def save_answer(
    session: Session,
    claim: Claim,
    *,
    api_key_id: uuid.UUID | None,
    status: int,
    body: Any,
    headers: dict[str, str],
    retention: timedelta,
    names: Sequence[uuid.UUID] = (),
) -> None:
    """Store the request's answer under its key, in one statement: a new record, or into the
    job this request accepted with the same key (which keeps its kind and status); and the
    memories it ``names`` beyond its `id` (`operation_memory`)."""
    now = utcnow()
    answer = {"api_key_id": api_key_id, "response_status": status, "response_body": body,
              "response_headers": headers, "updated_at": now, "expires_at": now + retention}
    statement = insert(Operation).values(
        id=uuid.uuid4(), tenant_id=claim.tenant_id, idempotency_key=claim.key, kind=claim.kind,
        request_method=claim.method, request_path=claim.path, request_digest=claim.digest,
        status=OperationStatus.succeeded, created_at=now, **answer,
    )
    operation_id = session.execute(statement.on_conflict_do_update(
        index_elements=["tenant_id", "idempotency_key"], set_=answer,
    ).returning(col(Operation.id))).scalar_one()
    if names:
        session.execute(insert(OperationMemory).values([
            {"operation_id": operation_id, "tenant_id": claim.tenant_id, "memory_id": name}
            for name in dict.fromkeys(names)
        ]).on_conflict_do_nothing())


def redact_answers(session: Session, *, memory_id: uuid.UUID, state: str) -> None:
    """Rewrite every stored answer showing the memory (`redact_answers_of` for one)."""
    _redact(session, memory_ids=[memory_id], state=state)


# One statement for both kinds of stored answer, each found through an index (a retention run
# redacts for thousands of memories): those whose `id` is one of the memories
# (`response_id`), and batch answers with an item showing one (`operation_memory`), whose
# item keeps its status and its memory only as {"id", "state"}. The two sets are disjoint:
# a batch answer has no top-level `id`.
REDACT_ANSWERS_OF = text(
    """
    WITH whole AS (
        UPDATE operation
        SET response_body = jsonb_build_object('id', response_id, 'state', CAST(:state AS text)),
            response_headers = '{}'::jsonb
        WHERE response_id = ANY(CAST(:memory_ids AS text[]))
        RETURNING 1
    ), items AS (
        UPDATE operation o
        SET response_body = jsonb_set(o.response_body, '{results}', COALESCE((
                SELECT jsonb_agg(CASE WHEN e.item -> 'memory' ->> 'id'
                                           = ANY(CAST(:memory_ids AS text[]))
                                 THEN jsonb_build_object(
                                     'status', e.item -> 'status',
                                     'memory', jsonb_build_object(
                                         'id', e.item -> 'memory' -> 'id',
                                         'state', CAST(:state AS text)))
                                 ELSE e.item END ORDER BY e.n)
                FROM jsonb_array_elements(o.response_body -> 'results')
                     WITH ORDINALITY e(item, n)
            ), '[]'::jsonb)),
            response_headers = '{}'::jsonb
        WHERE o.id IN (SELECT operation_id FROM operation_memory
                       WHERE memory_id = ANY(CAST(:memory_ids AS uuid[])))
          AND jsonb_typeof(o.response_body -> 'results') = 'array'
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM whole) + (SELECT count(*) FROM items)
    """
)


def redact_answers_of(session: Session, *, memory_ids: Sequence[uuid.UUID], state: str) -> int:
    """Rewrite every stored answer showing one of these memories: to `{"id", "state"}`, or,
    in a batch's answer, the item showing it. Returns how many answers."""
    return _redact(session, memory_ids=memory_ids, state=state)


def _redact(session: Session, *, memory_ids: Sequence[uuid.UUID], state: str) -> int:
    if not memory_ids:
        return 0
    return int(session.execute(REDACT_ANSWERS_OF, {
        "memory_ids": [str(i) for i in memory_ids], "state": str(state)}).scalar_one())


# Pending jobs whose payload names the subject: failed, payload gone (an erasure's part).
_FAIL_MENTIONING = text(
    """
    UPDATE operation
    SET status = 'failed', request_payload = NULL, result = NULL, updated_at = now(),
        error = jsonb_build_object('type', 'https://lethe.dev/problems/subject-erased',
                                   'detail', 'The subject was erased before this ran.')
    WHERE status IN ('queued', 'running') AND (strpos(request_payload::text, :needle) > 0
                                               OR strpos(request_payload::text, :key_id) > 0)
    """
)
# Stored answers and results showing the subject, or any of the erased memories by ID
# (anywhere in the body: recall answers list memories in nested objects).
_REDACT_MENTIONING = text(
    """
    UPDATE operation
    SET response_body = jsonb_build_object('id', response_body -> 'id', 'state', 'forgotten'),
        response_headers = '{}'::jsonb,
        result = CASE WHEN strpos(result::text, :needle) > 0 THEN NULL ELSE result END
    WHERE (response_body IS NOT NULL AND response_body <> jsonb_build_object(
               'id', response_body -> 'id', 'state', 'forgotten')
           AND (strpos(response_body::text, :needle) > 0
                OR strpos(response_body::text, :key_id) > 0
                OR EXISTS (SELECT 1 FROM jsonb_path_query(response_body, 'lax $.**.id') j(v)
                           WHERE j.v #>> '{}' = ANY(CAST(:ids AS text[])))
                OR EXISTS (SELECT 1 FROM jsonb_path_query(response_body, 'lax $.shows[*]') j(v)
                           WHERE j.v #>> '{}' = ANY(CAST(:ids AS text[])))))
       OR strpos(result::text, :needle) > 0
    """
)


def erase_mentions(
    session: Session, *, needle: str, key_id: str, memory_ids: Sequence[uuid.UUID]
) -> tuple[int, int]:
    """An erasure's part, over the current tenant's records: pending jobs whose payload holds
    ``needle`` (the subject as a JSON string, in a record stored before sealing) or is
    sealed under the subject's key ``key_id`` fail without it; stored answers that hold
    either or show one of ``memory_ids`` are redacted to `{"id", "state": "forgotten"}`.
    Returns (jobs failed, answers redacted)."""
    failed = session.execute(_FAIL_MENTIONING, {"needle": needle, "key_id": key_id})
    redacted = session.execute(_REDACT_MENTIONING, {
        "needle": needle, "key_id": key_id, "ids": [str(i) for i in memory_ids]})
    return (int(getattr(failed, "rowcount", 0) or 0),
            int(getattr(redacted, "rowcount", 0) or 0))


def count_jobs(session: Session) -> dict[tuple[str, str], int]:
    """The current tenant's operations by (kind, status), under row-level security."""
    rows = session.execute(
        select(Operation.kind, Operation.status, func.count()).group_by(
            col(Operation.kind), col(Operation.status))
    ).all()
    return {(str(kind), str(getattr(status, "value", status))): int(n) for kind, status, n in rows}


def prune(session: Session, *, now: datetime) -> int:
    """Delete the current tenant's expired, finished records (under row-level security)."""
    result = session.execute(
        delete(Operation).where(
            col(Operation.expires_at) <= now,
            col(Operation.status).in_(FINISHED),
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)
