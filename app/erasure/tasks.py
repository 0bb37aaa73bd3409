"""The erasure tasks: the cascade, its vacuum, resuming after a hold, settling after the
artifacts, and the beat's sweep."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from celery import Task
from sqlalchemy import text

from app.core import db, uow
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.core.jobs import enqueue_job
from app.erasure import cascade, service
from app.keys.errors import KeyStoreUnavailable
from app.tenants import service as tenants

log = logging.getLogger(__name__)
MAX_RETRIES = 8


class TransientError(Exception):
    """A content-free stand-in for a transient database error, for Celery's retry."""


@celery_app.task(name=service.RUN_TASK, bind=True, acks_late=True, max_retries=MAX_RETRIES)
def run(self: Task[Any, Any], request_id: str, tenant_id: str) -> str:
    """Run the cascade of ``request_id`` to its end (a no-op once it is past `running`).

    Each batch commits on its own; a delivery after a crash goes on from the checkpoint.
    """
    request, tenant = uuid.UUID(request_id), uuid.UUID(tenant_id)
    size = get_settings().erasure_batch_size
    try:
        with uow.unit_of_work(tenant) as session:
            if not cascade.begin(session, tenant_id=tenant, request_id=request):
                return "skipped"
        while True:
            while True:
                with uow.unit_of_work(tenant) as session:
                    if not cascade.erase_batch(session, tenant_id=tenant, request_id=request,
                                               size=size):
                        break
            with uow.unit_of_work(tenant) as session:
                outcome = cascade.finish(session, tenant_id=tenant, request_id=request)
            if outcome != "again":
                return outcome
    except Exception as exc:
        retries = int(self.request.retries or 0)
        # Only class names: database error messages quote parameters (the subject).
        # A key store that cannot be read now (a remount, a KMS restart) is retried like a
        # database that went away: the cascade goes on from its checkpoint.
        transient = db.is_transient(exc) or isinstance(exc, KeyStoreUnavailable)
        if transient and retries < MAX_RETRIES:
            log.warning("erasure %s: transient %s; retry %d", request, type(exc).__name__,
                        retries + 1)
            raise self.retry(exc=TransientError(type(exc).__name__),
                             countdown=min(2 ** (retries + 1), 60)) from None
        log.error("erasure %s failed (%s)", request, type(exc).__name__)
        with uow.unit_of_work(tenant) as session:
            cascade.fail(session, tenant_id=tenant, request_id=request, exc=exc)
        return "failed"


@celery_app.task(name=cascade.VACUUM_TASK, acks_late=True)
def vacuum(request_id: str, tenant_id: str) -> None:
    """VACUUM the tables the erasure touched (outside a transaction, as the owner), then
    record `vacuumed_at`."""
    with db.autocommit(owner=True) as conn:
        conn.execute(text("VACUUM (ANALYZE) " + ", ".join(cascade.TOUCHED_TABLES)))
    tenant = uuid.UUID(tenant_id)
    with uow.unit_of_work(tenant) as session:
        cascade.vacuumed(session, tenant_id=tenant, request_id=uuid.UUID(request_id))


@celery_app.task(name="erasure.resume", acks_late=True)
def resume(tenant_id: str) -> int:
    """A hold of the tenant was released: its `on_hold` erasures run again."""
    tenant = uuid.UUID(tenant_id)
    with uow.unit_of_work(tenant) as session:
        resumed = cascade.resume(session, tenant_id=tenant)
        for request_id in resumed:
            enqueue_job(service.RUN_TASK, request_id, tenant)
    return len(resumed)


@celery_app.task(name="erasure.settle", acks_late=True)
def settle(request_id: str, tenant_id: str) -> str:
    tenant = uuid.UUID(tenant_id)
    with uow.unit_of_work(tenant) as session:
        return cascade.settle(session, tenant_id=tenant, request_id=uuid.UUID(request_id))


@celery_app.task(name="erasure.sweep", acks_late=True)
def sweep() -> int:
    """Beat: settle `awaiting_artifacts` requests whose artifacts all acknowledged, and send
    again the pending or running ones whose message was lost (sending twice is harmless:
    deliveries queue on the request's row lock and go on from its checkpoint)."""
    touched = 0
    # A pending or running request untouched this long has lost its message.
    stale_after = timedelta(seconds=get_settings().requeue_after_seconds)
    for tenant in tenants.all_tenant_ids():
        with uow.unit_of_work(tenant) as session:
            lost, awaiting = cascade.stalled(session, tenant_id=tenant, before=stale_after)
            for request_id in awaiting:
                cascade.settle(session, tenant_id=tenant, request_id=request_id)
            for request_id in lost:
                enqueue_job(service.RUN_TASK, request_id, tenant)
        touched += len(lost) + len(awaiting)
    return touched
