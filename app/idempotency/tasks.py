"""Beat jobs for operation records."""

from __future__ import annotations

import logging
from datetime import timedelta

from app.core import uow
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.idempotency import service, store
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


@celery_app.task(name="idempotency.requeue_stale_jobs", acks_late=True)
def requeue_stale_jobs() -> int:
    """Beat: send again every accepted job left pending too long — its send after the commit
    failed (the broker was down) or the broker lost it. Sending twice is harmless: a task
    finds its operation finished, or locked by the delivery already running it."""
    before = utcnow() - timedelta(seconds=get_settings().requeue_after_seconds)
    sent = 0
    for tenant_id in tenants.all_tenant_ids():
        with uow.unit_of_work(tenant_id) as session:
            stale = store.stale_jobs(session, tenant_id=tenant_id, before=before)
            for operation_id, task in stale:
                enqueue_job(task, operation_id, tenant_id)
        sent += len(stale)
    if sent:
        log.warning("requeued %d stale jobs", sent)
    return sent
