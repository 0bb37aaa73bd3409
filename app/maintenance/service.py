"""Maintenance jobs run now for one tenant: what beat otherwise runs on its schedule."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlmodel import Session

from app.forgetting import consolidation
from app.forgetting.batches import Batch, decay_batch, expiry_batch, retention_batch
from app.idempotency import store as operations
from app.idempotency.keys import Claim
from app.idempotency.models import Operation
from app.invalidation import service as dependencies

RUN_TASK = "maintenance.run"


class Job(enum.StrEnum):
    decay = "decay"
    expire = "expire"
    retention = "retention"
    consolidate = "consolidate"
    invalidate = "invalidate"


KINDS = {job: operations.job_kind(f"maintenance.{job.value}", RUN_TASK) for job in Job}


def accept(session: Session, *, tenant_id: uuid.UUID, job: Job, api_key_id: uuid.UUID | None,
           claim: Claim | None = None) -> Operation:
    """The queued job (sent after commit); with ``claim`` also the request's replayable
    answer."""
    return operations.accept_job(
        session, KINDS[job], {"job": job.value}, tenant_id=tenant_id, method="POST",
        path=f"/v1/maintenance/{job.value}", claim=claim, api_key_id=api_key_id,
    )


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
    operation = operations.lock_job(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None or operation.status in operations.FINISHED:
        return Step.finished_before
    job = Job(str((operations.payload_of(operation) or {}).get("job")))
    batch = step(session, tenant_id=tenant_id, job=job, now=now, batch_size=batch_size)
    result: dict[str, Any] = dict(operation.result or {"job": job.value})
    for name, ids in batch.moved.items():
        result[name] = [*result.get(name, []), *ids]
    if batch.last:
        operations.succeed(session, operation, result)
        return Step.done
    operations.record_progress(session, operation, result)
    return Step.more


def step(session: Session, *, tenant_id: uuid.UUID, job: Job, now: datetime,
         batch_size: int) -> Batch:
    """One step of ``job`` for the tenant (decay and retention move at most ``batch_size``;
    the others run whole)."""
    if job is Job.decay:
        return decay_batch(session, tenant_id=tenant_id, now=now, size=batch_size)
    if job is Job.expire:
        return expiry_batch(session, tenant_id=tenant_id, now=now, size=batch_size)
    if job is Job.retention:
        return retention_batch(session, tenant_id=tenant_id, now=now, size=batch_size)
    if job is Job.consolidate:
        return Batch({"deprecated": consolidation.consolidate(session, tenant_id=tenant_id)},
                     last=True)
    suspected: list[str] = []
    for dependency in dependencies.listing(session, tenant_id=tenant_id):
        suspected += dependencies.invalidate_key(session, tenant_id=tenant_id,
                                                 key=dependency.key)
    return Batch({"suspected": suspected}, last=True)
