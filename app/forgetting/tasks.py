"""Forgetting on beat: decay, retention and consolidation of every tenant."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from app.core import uow
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.core.models import utcnow
from app.forgetting import consolidation
from app.forgetting.batches import Step, decay_batch, expiry_batch, retention_batch
from app.tenants import service as tenants

log = logging.getLogger(__name__)


@celery_app.task(name="forgetting.decay", acks_late=True)
def decay_all() -> int:
    """Beat: decay every tenant; overlapping runs move nothing twice."""
    moved = _every_tenant(decay_batch)
    log.info("decay moved %d memories to suspect", moved)
    return moved


@celery_app.task(name="forgetting.expire", acks_late=True)
def expire_all() -> int:
    """Beat: deprecate every tenant's expired memories (flag `expired`); overlapping runs move
    nothing twice."""
    moved = _every_tenant(expiry_batch)
    log.info("expiry deprecated %d memories", moved)
    return moved


@celery_app.task(name="forgetting.retention", acks_late=True)
def retention_all() -> int:
    """Beat: retention for every tenant; overlapping runs move nothing twice."""
    moved = _every_tenant(retention_batch)
    log.info("retention moved %d memories (quarantined or forgotten)", moved)
    return moved


def _every_tenant(step: Step) -> int:
    """``step`` for every tenant, with one clock for the whole run; the memories moved."""
    now = utcnow()
    return sum(run_for_tenant(step, tenant_id, now=now) for tenant_id in tenants.all_tenant_ids())


def run_for_tenant(step: Step, tenant_id: uuid.UUID, *, now: datetime) -> int:
    """One tenant's decay or retention in committed batches; the number of memories moved.

    An overlapping run (a slow tick, a maintenance call) waits on the batch it collides with,
    then skips what that batch moved, so nothing moves twice. The caller fixes ``now`` for the
    whole run: what becomes due meanwhile waits for the next tick, and the loop ends.
    """
    size = get_settings().maintenance_batch_size
    moved = 0
    while True:
        with uow.unit_of_work(tenant_id) as session:
            batch = step(session, tenant_id=tenant_id, now=now, size=size)
        moved += batch.count
        if batch.last:
            return moved


@celery_app.task(name="forgetting.consolidate", acks_late=True)
def consolidate_all() -> int:
    """Beat: consolidate every tenant; overlapping runs collapse nothing twice."""
    collapsed = sum(consolidate_tenant(tenant_id) for tenant_id in tenants.all_tenant_ids())
    log.info("consolidation deprecated %d near-duplicate memories", collapsed)
    return collapsed


def consolidate_tenant(tenant_id: uuid.UUID) -> int:
    """One transaction per subject: a large tenant never holds its audit chain lock long."""
    with uow.unit_of_work(tenant_id) as session:
        subjects = consolidation.subjects(session, tenant_id=tenant_id)
    collapsed = 0
    for subject in subjects:
        with uow.unit_of_work(tenant_id) as session:
            collapsed += len(consolidation.consolidate(session, tenant_id=tenant_id,
                                                       subject=subject))
    return collapsed
