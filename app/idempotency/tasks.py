"""Beat jobs for operation records."""

from __future__ import annotations

import logging

from app.core import uow
from app.core.celery_app import celery_app
from app.idempotency import service
from app.tenants import service as tenants

log = logging.getLogger(__name__)


@celery_app.task(name="idempotency.prune_operations", acks_late=True)
def prune_operations() -> int:
    """Delete expired operation records of every tenant; safe to run twice at once."""
    tenant_ids = tenants.all_tenant_ids()
    removed = 0
    for tenant_id in tenant_ids:
        with uow.unit_of_work(tenant_id) as session:
            removed += service.prune(session)
    log.info("pruned %d expired operation records", removed)
    return removed
