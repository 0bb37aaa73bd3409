"""The ingestion task: applies an accepted `POST /v1/ingest`, exactly once in effect.

It takes IDs only and reads the items from the operation row. A redelivery (worker crash
before the ack, a duplicate send, a retry) finds the row finished and changes nothing; a
redelivery that finds it unfinished — or a new operation after the record was pruned — lands
every item on the same derived memory ID, which `memories.create` answers without storing
anything when it already exists or was forgotten.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from celery import Task

from app.core import faults, uow
from app.core.celery_app import celery_app
from app.core.db import is_transient
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.ingestion import service
from app.tenants import service as tenants

log = logging.getLogger(__name__)

MAX_RETRIES = 5
# An operation pending this long without a touch has lost its message (a failed send after
# commit, a broker that dropped an unacknowledged delivery): `requeue_stale` sends it again.
STALE_AFTER = timedelta(minutes=10)


class TransientError(Exception):
    """A content-free stand-in for a transient database error, for Celery's retry."""


@celery_app.task(name=service.APPLY_TASK, bind=True, acks_late=True, max_retries=MAX_RETRIES)
def apply_ingestion(self: Task[Any, Any], operation_id: str, tenant_id: str) -> None:
    """Apply the ingestion ``operation_id`` of ``tenant_id`` (a no-op once it has finished)."""
    operation, tenant = uuid.UUID(operation_id), uuid.UUID(tenant_id)
    try:
        applied = _run(operation, tenant)
    except Exception as exc:
        retries = int(self.request.retries or 0)
        # Only the class name is logged or stored: database error messages quote parameters,
        # and those can be memory text.
        if is_transient(exc) and retries < MAX_RETRIES:
            # The operation stays running with its items, so the retry can still apply them.
            log.warning("ingestion %s: transient %s; retry %d of %d", operation,
                        type(exc).__name__, retries + 1, MAX_RETRIES)
            raise self.retry(exc=TransientError(type(exc).__name__),
                             countdown=min(2 ** (retries + 1), 60)) from None
        log.error("ingestion %s failed (%s)", operation, type(exc).__name__)
        with uow.unit_of_work(tenant) as session:
            service.fail(session, tenant_id=tenant, operation_id=operation, exc=exc)
        return
    if applied:
        faults.crash_after_commit(service.APPLY_TASK)


def _run(operation: uuid.UUID, tenant: uuid.UUID) -> bool:
    # A: claim the work in a short transaction.
    with uow.unit_of_work(tenant) as session:
        started = service.start(session, tenant_id=tenant, operation_id=operation)
    if started is None:
        return False
    # B: the slow part (embeddings, the judge, forget plans), holding no connection.
    prepared = service.prepare(tenant_id=tenant, started=started)
    # C: the requested forgets, every item, the result and the cleared payload commit together.
    with uow.unit_of_work(tenant) as session:
        result = service.apply(session, tenant_id=tenant, operation_id=operation,
                               body=started.body, prepared=prepared)
    return result is not None


@celery_app.task(name="ingestion.requeue_stale", acks_late=True)
def requeue_stale() -> int:
    """Send again every ingestion left pending too long (sending twice is harmless)."""
    before = utcnow() - STALE_AFTER
    tenant_ids = tenants.all_tenant_ids()
    sent = 0
    for tenant_id in tenant_ids:
        with uow.unit_of_work(tenant_id) as session:
            stale = service.stale(session, tenant_id=tenant_id, before=before)
            for operation_id in stale:
                enqueue_job(service.APPLY_TASK, operation_id, tenant_id)
        sent += len(stale)
    if sent:
        log.warning("requeued %d stale ingestions", sent)
    return sent
