"""Maintenance tasks: one job for one tenant on request; decay and retention on beat."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from app.core import db
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.core.models import utcnow
from app.maintenance import service
from app.tenants import service as tenants

log = logging.getLogger(__name__)


@celery_app.task(name="maintenance.run", acks_late=True)
def run(operation_id: str, tenant_id: str) -> bool:
    """Run a requested job in committed steps; False when a delivery already finished it."""
    tenant, operation = uuid.UUID(tenant_id), uuid.UUID(operation_id)
    now, size = utcnow(), get_settings().maintenance_batch_size
    while True:
        with db.session_scope(tenant) as session:
            step = service.run_step(session, tenant_id=tenant, operation_id=operation, now=now,
                                    batch_size=size)
        if step is not service.Step.more:
            return step is service.Step.done


@celery_app.task(name="forgetting.decay", acks_late=True)
def decay_all() -> int:
    """Beat: decay every tenant; overlapping runs move nothing twice."""
    moved = _every_tenant(service.Job.decay)
    log.info("decay moved %d memories to suspect", moved)
    return moved


@celery_app.task(name="forgetting.retention", acks_late=True)
def retention_all() -> int:
    """Beat: retention for every tenant; overlapping runs move nothing twice."""
    moved = _every_tenant(service.Job.retention)
    log.info("retention moved %d memories (quarantined or forgotten)", moved)
    return moved


def _every_tenant(job: service.Job) -> int:
    """``job`` for every tenant, with one clock for the whole run; the memories moved."""
    now = utcnow()
    return sum(run_for_tenant(job, tenant_id, now=now) for tenant_id in tenants.all_tenant_ids())


def run_for_tenant(job: service.Job, tenant_id: uuid.UUID, *, now: datetime) -> int:
    """One tenant's ``job`` in committed steps, as beat runs it; the number of memories moved.

    A batch commits before the next begins, so a large run never holds the tenant's audit
    chain lock (which every auditing request of the tenant waits for) for long. An overlapping
    run (a slow tick, a maintenance call) waits on the batch it collides with, then skips what
    that batch moved, so nothing moves twice. The caller fixes ``now`` for the whole run: what
    becomes due meanwhile waits for the next tick, and the loop ends.
    """
    size = get_settings().maintenance_batch_size
    moved = 0
    while True:
        with db.session_scope(tenant_id) as session:
            ids, last = service.step(session, tenant_id=tenant_id, job=job, now=now,
                                     batch_size=size)
        moved += sum(len(batch) for batch in ids.values())
        if last:
            return moved


def send(operation_id: uuid.UUID, tenant_id: uuid.UUID) -> None:
    run.apply_async(args=[str(operation_id), str(tenant_id)])
