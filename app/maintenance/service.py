"""Maintenance jobs run now for one tenant: what beat otherwise runs on its schedule."""

from __future__ import annotations

import enum
import hashlib
import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, select

from app.core.models import utcnow
from app.forgetting import consolidation, decay, retention
from app.idempotency.models import Operation, OperationStatus
from app.invalidation import service as dependencies

RETENTION = timedelta(days=7)
FINISHED = (OperationStatus.succeeded, OperationStatus.failed)


class Job(enum.StrEnum):
    decay = "decay"
    retention = "retention"
    consolidate = "consolidate"
    invalidate = "invalidate"


def accept(session: Session, *, tenant_id: uuid.UUID, job: Job,
           api_key_id: uuid.UUID | None) -> Operation:
    now = utcnow()
    operation = Operation(
        tenant_id=tenant_id, api_key_id=api_key_id, kind=f"maintenance.{job.value}",
        request_method="POST", request_path=f"/v1/maintenance/{job.value}",
        request_digest=hashlib.sha256(f"{job.value}\0{now.isoformat()}".encode()).hexdigest(),
        status=OperationStatus.queued, request_payload={"job": job.value},
        expires_at=now + RETENTION,
    )
    session.add(operation)
    session.flush()
    return operation


class Step(enum.Enum):
    finished_before = "finished-before"  # a delivery already finished this operation
    more = "more"  # a batch committed; more may be due
    done = "done"  # this delivery finished the operation


def run_step(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID,
             now: datetime, batch_size: int) -> Step:
    """One committed step of the job of ``operation_id``.

    Decay and retention move at most ``batch_size`` memories a step, so a large run never
    holds the tenant's audit chain (which every auditing request waits for) for long; what
    each step moved is added to the operation's result in the same transaction, so the result
    stays complete across a crash and the redelivery that resumes it. The operation row lock
    keeps two deliveries from running steps at once.
    """
    operation = session.exec(
        select(Operation).where(Operation.id == operation_id, Operation.tenant_id == tenant_id)
        .with_for_update()
    ).first()
    if operation is None or operation.status in FINISHED:
        return Step.finished_before
    job = Job(str((operation.request_payload or {}).get("job")))
    moved, last = step(session, tenant_id=tenant_id, job=job, now=now, batch_size=batch_size)
    result: dict[str, Any] = dict(operation.result or {"job": job.value})
    for name, ids in moved.items():
        result[name] = [*result.get(name, []), *ids]
    operation.result = result
    if last:
        operation.status = OperationStatus.succeeded
        operation.request_payload = None
    else:
        operation.status = OperationStatus.running
    operation.updated_at = utcnow()
    session.add(operation)
    session.flush()
    return Step.done if last else Step.more


def step(session: Session, *, tenant_id: uuid.UUID, job: Job, now: datetime,
         batch_size: int) -> tuple[dict[str, list[str]], bool]:
    """One step of ``job`` for the tenant: what it moved, by result field, and whether it
    was the last (decay and retention move at most ``batch_size``; the others run whole)."""
    if job is Job.decay:
        ids = decay.decay(session, tenant_id=tenant_id, now=now, limit=batch_size)
        return {"suspected": ids}, len(ids) < batch_size
    if job is Job.retention:
        moved = retention.retention(session, tenant_id=tenant_id, now=now, limit=batch_size)
        return moved, sum(len(ids) for ids in moved.values()) < batch_size
    if job is Job.consolidate:
        return {"deprecated": consolidation.consolidate(session, tenant_id=tenant_id)}, True
    suspected: list[str] = []
    for dependency in dependencies.listing(session, tenant_id=tenant_id):
        suspected += dependencies.invalidate_key(session, tenant_id=tenant_id,
                                                 key=dependency.key)
    return {"suspected": suspected}, True
