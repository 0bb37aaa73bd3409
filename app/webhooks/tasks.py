"""Webhook delivery jobs: one attempt per message, retries sent after the attempt commits,
and a beat sweep that re-sends due retries whose message was lost."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from app.core import faults, uow
from app.core.celery_app import celery_app
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.tenants import service as tenants
from app.webhooks import delivery
from app.webhooks.service import DELIVER_TASK

log = logging.getLogger(__name__)
# A retry's own message normally arrives on time; the sweep takes those this late.
LOST_AFTER = timedelta(minutes=1)


@celery_app.task(name=DELIVER_TASK, acks_late=True)
def deliver(delivery_id: str, tenant_id: str) -> str | None:
    """Attempt the delivery ``delivery_id`` if it is due (a no-op otherwise)."""
    with uow.unit_of_work(uuid.UUID(tenant_id)) as session:
        attempted = delivery.attempt(session, tenant_id=uuid.UUID(tenant_id),
                                     delivery_id=uuid.UUID(delivery_id))
    if attempted.status is not None:
        faults.crash_after_commit(DELIVER_TASK)
    if attempted.retry_in is not None:
        # After the commit, like every job: the retry finds its attempt recorded.
        deliver.apply_async(args=[delivery_id, tenant_id], countdown=attempted.retry_in)
    return attempted.status.value if attempted.status else None


@celery_app.task(name="webhooks.retry_due", acks_late=True)
def retry_due() -> int:
    """Beat: send again every pending delivery well past its time (sending twice is
    harmless: the second finds it busy or done)."""
    before = utcnow() - LOST_AFTER
    sent = 0
    for tenant_id in tenants.all_tenant_ids():
        with uow.unit_of_work(tenant_id) as session:
            lost = delivery.due(session, tenant_id=tenant_id, before=before)
            for delivery_id in lost:
                enqueue_job(DELIVER_TASK, delivery_id, tenant_id)
        sent += len(lost)
    if sent:
        log.info("re-sent %d overdue webhook deliveries", sent)
    return sent
