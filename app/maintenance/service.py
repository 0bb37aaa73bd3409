"""Maintenance jobs run now for one tenant: what beat otherwise runs on its schedule."""

from __future__ import annotations

import enum
import hashlib
import uuid
from datetime import timedelta
from typing import Any

from sqlmodel import Session, select

from app.core.models import utcnow
from app.dependencies import service as dependencies
from app.forgetting import consolidation, decay, retention
from app.idempotency.models import Operation, OperationStatus

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


def run(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> bool:
    """Run the job of ``operation_id``; False when a delivery already finished it."""
    operation = session.exec(
        select(Operation).where(Operation.id == operation_id, Operation.tenant_id == tenant_id)
        .with_for_update()
    ).first()
    if operation is None or operation.status in FINISHED:
        return False
    job = Job(str((operation.request_payload or {}).get("job")))
    operation.status = OperationStatus.succeeded
    operation.result = _run_job(session, tenant_id=tenant_id, job=job)
    operation.request_payload = None
    operation.updated_at = utcnow()
    session.add(operation)
    session.flush()
    return True


def _run_job(session: Session, *, tenant_id: uuid.UUID, job: Job) -> dict[str, Any]:
    if job is Job.decay:
        return {"job": job.value, "suspected": decay.decay(session, tenant_id=tenant_id)}
    if job is Job.retention:
        return {"job": job.value, **retention.retention(session, tenant_id=tenant_id)}
    if job is Job.consolidate:
        return {"job": job.value,
                "deprecated": consolidation.consolidate(session, tenant_id=tenant_id)}
    suspected: list[str] = []
    for dependency in dependencies.listing(session, tenant_id=tenant_id):
        suspected += dependencies.invalidate_key(session, tenant_id=tenant_id,
                                                 key=dependency.key)
    return {"job": job.value, "suspected": suspected}
