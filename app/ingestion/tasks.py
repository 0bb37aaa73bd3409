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
from typing import Any

from celery import Task

from app.core import faults, uow
from app.core.celery_app import celery_app
from app.core.db import is_transient
from app.ingestion import service

log = logging.getLogger(__name__)

MAX_RETRIES = 5


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
