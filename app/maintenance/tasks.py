"""The maintenance task: one requested job for one tenant (beat's own runs: forgetting/tasks)."""

from __future__ import annotations

import uuid

from app.core import uow
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.core.models import utcnow
from app.maintenance import service


@celery_app.task(name=service.RUN_TASK, acks_late=True)
def run(operation_id: str, tenant_id: str) -> bool:
    """Run a requested job in committed steps; False when a delivery already finished it."""
    tenant, operation = uuid.UUID(tenant_id), uuid.UUID(operation_id)
    now, size = utcnow(), get_settings().maintenance_batch_size
    while True:
        with uow.unit_of_work(tenant) as session:
            step = service.run_step(session, tenant_id=tenant, operation_id=operation, now=now,
                                    batch_size=size)
        if step is not service.Step.more:
            return step is service.Step.done
