"""Maintenance tasks: one job for one tenant on request, decay for every tenant on beat."""

from __future__ import annotations

import logging
import uuid

from app.core import db
from app.core.celery_app import celery_app
from app.forgetting import decay
from app.maintenance import service
from app.tenants import service as tenants

log = logging.getLogger(__name__)


@celery_app.task(name="maintenance.run", acks_late=True)
def run(operation_id: str, tenant_id: str) -> bool:
    tenant = uuid.UUID(tenant_id)
    with db.session_scope(tenant) as session:
        return service.run(session, tenant_id=tenant, operation_id=uuid.UUID(operation_id))


@celery_app.task(name="forgetting.decay", acks_late=True)
def decay_all() -> int:
    """Beat: decay every tenant, one transaction each; overlapping runs move nothing twice."""
    tenant_ids = tenants.all_tenant_ids()
    moved = 0
    for tenant_id in tenant_ids:
        with db.session_scope(tenant_id) as session:
            moved += len(decay.decay(session, tenant_id=tenant_id))
    log.info("decay moved %d memories to suspect", moved)
    return moved


def send(operation_id: uuid.UUID, tenant_id: uuid.UUID) -> None:
    run.apply_async(args=[str(operation_id), str(tenant_id)])
