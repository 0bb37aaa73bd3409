"""The invalidation job, run by a worker after the dependency change committed."""

from __future__ import annotations

import uuid

from app.core import uow
from app.core.celery_app import celery_app
from app.invalidation import service


@celery_app.task(name=service.INVALIDATE_TASK, acks_late=True)
def invalidate(operation_id: str, tenant_id: str) -> bool:
    """Mark memories depending on another value suspect; idempotent, safe to overlap."""
    tenant = uuid.UUID(tenant_id)
    with uow.unit_of_work(tenant) as session:
        return service.invalidate(session, tenant_id=tenant,
                                  operation_id=uuid.UUID(operation_id))
