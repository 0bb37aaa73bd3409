"""Access requests: accept (the request), then export (the task), then download.

The export is subject data in full, so it is kept in `access_export` (see `models.py`), never
in the operation's stored answer or result: those hold the request's ID, status and counts.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from sqlmodel import Session

from app.access import export, store
from app.access.errors import AccessRequestNotFound, ExportNotReady
from app.audit import service as audit
from app.idempotency import store as operations
from app.idempotency.keys import Claim
from app.idempotency.models import Operation, OperationStatus
from app.keys import digests

EXPORT_TASK = "access.export"
KIND = operations.job_kind("access_request", EXPORT_TASK)
PATH = "/v1/access-requests"
ACTOR = audit.system_actor("access")


def export_path(request_id: uuid.UUID) -> str:
    return f"{PATH}/{request_id}/export"


def accept(
    session: Session, *, tenant_id: uuid.UUID, subject: str, actor: str,
    api_key_id: uuid.UUID | None, claim: Claim | None = None,
) -> Operation:
    """The queued request (its task sent after commit), audited without its subject."""
    operation = operations.accept_job(
        session, KIND, {"subject": subject}, tenant_id=tenant_id,
        method="POST", path=PATH, claim=claim, api_key_id=api_key_id,
    )
    audit.record(session, tenant_id=tenant_id, actor=actor, action="access.requested",
                 target_kind="access_request", target_id=operation.id)
    return operation


def start(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> bool:
    """Mark the request running; False when a delivery already finished it."""
    operation = operations.lock_job(session, tenant_id=tenant_id, operation_id=operation_id,
                                    kind=KIND)
    if operation is None or operation.status in operations.FINISHED:
        return False
    operations.mark_running(session, operation)
    return True


def run(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID,
        now: datetime) -> bool:
    """Build and keep the export, finish the operation with a content-free summary; False
    when a delivery already finished it (a redelivery changes nothing)."""
    operation = operations.lock_job(session, tenant_id=tenant_id, operation_id=operation_id,
                                    kind=KIND)
    if operation is None or operation.status in operations.FINISHED:
        return False
    payload = operations.payload_of(operation)
    if payload is None:  # the subject was erased before the export ran
        return False
    subject = str(payload["subject"])
    document = export.build(session, tenant_id=tenant_id, subject=subject,
                            request_id=operation_id, now=now)
    # Kept as long as the operation record answers: pruning the record takes it along.
    store.add(session, tenant_id=tenant_id, operation_id=operation_id,
              subject=digests.subject_digest(tenant_id, subject),
              body=document.model_dump(mode="json"), expires_at=operation.expires_at)
    counts = document.counts.model_dump()
    operations.succeed(session, operation, {
        "export": export_path(operation_id), "expires_at": operation.expires_at.isoformat(),
        "counts": counts})
    audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="access.exported",
                 target_kind="access_request", target_id=operation_id, details=counts)
    return True


def fail(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID,
         exc: BaseException) -> None:
    """Finish the request as failed, naming only the error's class (messages may quote
    parameters, and those can be the subject's data)."""
    operation = operations.lock_job(session, tenant_id=tenant_id, operation_id=operation_id,
                                    kind=KIND)
    if operation is None or operation.status in operations.FINISHED:
        return
    operations.fail(session, operation, {
        "type": "https://lethe.dev/problems/export-failed", "title": "The export failed",
        "error": type(exc).__name__})
    audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="access.failed",
                 target_kind="access_request", target_id=operation_id,
                 reason=type(exc).__name__[:100])


def download(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID,
             now: datetime) -> bytes:
    """The export file; `ExportNotReady` while it is being made (or when it failed),
    `AccessRequestNotFound` for an unknown, another tenant's or an expired request."""
    found = store.get(session, tenant_id=tenant_id, operation_id=request_id, now=now)
    if found is not None:
        return export_file(found)
    operation = operations.get(session, tenant_id=tenant_id, operation_id=request_id)
    if operation is None or operation.kind != KIND:
        raise AccessRequestNotFound()
    if operation.status == OperationStatus.succeeded:
        raise AccessRequestNotFound("The export has expired or was erased; file a new "
                                    "access request.")
    raise ExportNotReady(str(operation.status))


def export_file(body: dict[str, Any]) -> bytes:
    """The bytes of an export file: what the download and `lethe export` both give."""
    return json.dumps(body, ensure_ascii=False, indent=2, sort_keys=True).encode() + b"\n"
