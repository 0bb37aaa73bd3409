"""The ingestion task: applies an accepted `POST /v1/ingest`, exactly once in effect.

It takes IDs only and reads the items from the operation row. A redelivery (worker crash
before the ack, a duplicate send, a retry) finds the row finished and changes nothing; a
redelivery that finds it unfinished — or a new operation after the record was pruned — lands
every item on the same derived memory ID, which `memories.create` answers without storing
anything when it already exists or was forgotten.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery import Task
from sqlalchemy import exc as sa_exc
from sqlmodel import Session

from app.core import db
from app.core.celery_app import celery_app
from app.core.models import utcnow
from app.embeddings.runtime import embedder
from app.forgetting import describe
from app.ingestion import service
from app.tenants import service as tenants

log = logging.getLogger(__name__)

MAX_RETRIES = 5
FORGET_MAX_TARGETS = 5
# An operation pending this long without a touch has lost its message (a failed send after
# commit, a broker that dropped an unacknowledged delivery): `requeue_stale` sends it again.
STALE_AFTER = timedelta(minutes=10)
# Test-only fault injection, see `_crash_if_asked`.
FAULT_CRASH_AFTER_COMMIT = "LETHE_FAULT_CRASH_AFTER_COMMIT"


class TransientError(Exception):
    """A content-free stand-in for a transient database error, for Celery's retry."""


@celery_app.task(name="ingestion.apply", bind=True, acks_late=True, max_retries=MAX_RETRIES)
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
        with db.session_scope(tenant) as session:
            service.fail(session, tenant_id=tenant, operation_id=operation, exc=exc)
        return
    if applied:
        _crash_if_asked()


def _run(operation: uuid.UUID, tenant: uuid.UUID) -> bool:
    # A: claim the work in a short transaction.
    with db.session_scope(tenant) as session:
        started = service.start(session, tenant_id=tenant, operation_id=operation)
    if started is None:
        return False
    body = started.body
    # B: the slow part, holding no connection.
    texts = [item.text for item in body.memories]
    embeddings = embedder().embed(texts) if texts else []
    requests = service.forget_requests(body.messages) if started.detect_forget_requests else []
    # C: the requested forgets, every item, the result and the cleared payload commit together.
    try:
        with db.session_scope(tenant) as session:
            opened = False

            def final_transaction() -> Session:
                # Forget-by-description plans and embeds first, then asks for this
                # transaction: the operation is locked and checked before anything is changed.
                nonlocal opened
                if not opened:
                    if not service.unfinished(session, tenant_id=tenant, operation_id=operation):
                        raise _AlreadyFinished
                    opened = True
                return session

            forgets = [_forget(final_transaction, tenant, body.subject, request)
                       for request in requests]
            final_transaction()
            result = service.apply(session, tenant_id=tenant, operation_id=operation,
                                   body=body, embeddings=embeddings, forgets=forgets)
    except _AlreadyFinished:
        return False
    return result is not None


class _AlreadyFinished(Exception):
    """Another delivery finished this operation while this one was working."""


def _forget(
    open_session: Callable[[], Session], tenant: uuid.UUID, subject: str,
    request: dict[str, Any],
) -> dict[str, Any]:
    outcome = describe.forget_by_description(
        open_session, tenant_id=tenant, subject=subject, about=request["about"], delete=True,
        exclude_source=False, dry_run=False, max_targets=FORGET_MAX_TARGETS,
        actor=service.ACTOR, embed=embedder().embed,
    )
    answer = describe.public(outcome).model_dump(mode="json")
    return {"message": request["message"], **answer}


def is_transient(exc: BaseException) -> bool:
    """A database error that a later attempt may not meet (connection lost, deadlock…)."""
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError | sa_exc.TimeoutError)


def send(operation_id: uuid.UUID, tenant_id: uuid.UUID) -> None:
    """Queue the task; called only after the transaction that accepted it committed."""
    try:
        apply_ingestion.apply_async(args=[str(operation_id), str(tenant_id)])
    except Exception:
        # The operation is durable and answered 202; `requeue_stale` will send it.
        log.exception("could not queue ingestion %s; it will be requeued", operation_id)


@celery_app.task(name="ingestion.requeue_stale", acks_late=True)
def requeue_stale() -> int:
    """Send again every ingestion left pending too long (sending twice is harmless)."""
    before = utcnow() - STALE_AFTER
    tenant_ids = tenants.all_tenant_ids()
    sent = 0
    for tenant_id in tenant_ids:
        with db.session_scope(tenant_id) as session:
            stale = service.stale(session, tenant_id=tenant_id, before=before)
        for operation_id in stale:
            apply_ingestion.apply_async(args=[str(operation_id), str(tenant_id)])
            sent += 1
    if sent:
        log.warning("requeued %d stale ingestions", sent)
    return sent


def _crash_if_asked() -> None:
    """TEST-ONLY fault injection: die after the commit of step C, before the broker ack.

    When LETHE_FAULT_CRASH_AFTER_COMMIT names a file that does not exist yet, create it and
    exit the process at once, so a test can prove a delivery that committed but was never
    acknowledged is redelivered and changes nothing. Unset in every real deployment.
    """
    marker = os.environ.get(FAULT_CRASH_AFTER_COMMIT)
    if not marker:
        return
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(1)
