"""Filing, approving, cancelling and reading erasure requests (the cascade itself is
`cascade.py`, run by the worker).

A request is found by its subject through the keyed digest, so one open request per subject
holds before and after the plain subject is gone: a second filing while one is open answers
that one (200), never a second cascade.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.audit import service as audit
from app.core import paging
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.erasure import receipt as receipts
from app.erasure import states
from app.erasure.errors import ErasureNotFound, ReceiptNotReady
from app.erasure.models import OPEN, ErasureRequest, ErasureStatus
from app.erasure.schemas import (
    ErasureFiled,
    ErasureRequestCreate,
    ErasureRequestList,
    ErasureRequestPublic,
    Progress,
    Receipt,
)
from app.keys import digests as subject_digests
from app.memories import sealing
from app.tenant_settings import service as tenant_settings
from app.tenants import digests

RUN_TASK = "erasure.run"
TABLE = "erasure_request"
# Statuses whose request has a receipt: what was erased so far is final for these.
WITH_RECEIPT = (ErasureStatus.completed, ErasureStatus.on_hold, ErasureStatus.awaiting_artifacts)


def file(
    session: Session, *, tenant_id: uuid.UUID, body: ErasureRequestCreate, actor: str,
    request_id: uuid.UUID | None = None,
) -> tuple[ErasureFiled, bool]:
    """File an erasure (audited `erasure.requested`); True with a new request, False with the
    open request of the same subject. ``request_id`` comes from the Idempotency-Key."""
    hashed = digests.digest(session, tenant_id=tenant_id, value=body.subject)
    if request_id is not None:
        again = session.get(ErasureRequest, request_id)
        if again is not None and again.tenant_id == tenant_id:
            return _filed(again), False
    existing = _open_for(session, tenant_id, hashed)
    if existing is not None:
        return _filed(existing), False
    settings = tenant_settings.get(session, tenant_id=tenant_id).erasure
    now = utcnow()
    status = (ErasureStatus.pending_approval if settings.require_approval
              else ErasureStatus.pending)
    # While open the request names the subject as memories store it (the digest its cascade
    # looks them up by), the string kept sealed under its key for showing.
    stored = subject_digests.subject_digest(tenant_id, body.subject)
    request_id = request_id or uuid.uuid4()
    request = ErasureRequest(
        id=request_id, tenant_id=tenant_id, subject=stored,
        sealed_subject=sealing.seal(tenant_id, stored, (TABLE, request_id, "subject"),
                                    body.subject),
        subject_digest=hashed, status=status.value, reason=body.reason,
        requested_by=body.requested_by, filed_by=actor, created_at=now,
        due_at=now + timedelta(days=settings.due_days),
    )
    try:
        with session.begin_nested():
            session.add(request)
            session.flush()
    except IntegrityError:
        # Another filing for the subject committed between the read and the insert.
        session.expunge(request)
        existing = _open_for(session, tenant_id, hashed)
        if existing is None:
            raise
        return _filed(existing), False
    audit.record(session, tenant_id=tenant_id, actor=actor, action="erasure.requested",
                 target_kind=states.TARGET, target_id=request.id, to_state=status.value,
                 reason=body.reason, details={"due_at": request.due_at.isoformat()})
    if status is ErasureStatus.pending:
        enqueue_job(RUN_TASK, request.id, tenant_id)
    return _filed(request), True


def approve(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID,
            actor: str) -> ErasureRequestPublic:
    """Approve a `pending_approval` request: it becomes `pending` and its cascade is queued.
    Approving an approved (or further) request → 409."""
    request = lock(session, tenant_id=tenant_id, request_id=request_id)
    states.move(session, request, ErasureStatus.pending, actor=actor)
    enqueue_job(RUN_TASK, request.id, tenant_id)
    return public(session, request)


def cancel(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID,
           actor: str) -> ErasureRequestPublic:
    """Cancel a request before its cascade starts (`running` and later → 409)."""
    request = lock(session, tenant_id=tenant_id, request_id=request_id)
    states.move(session, request, ErasureStatus.cancelled, actor=actor)
    return public(session, request)


def get(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID
        ) -> ErasureRequestPublic:
    return public(session, _load(session, tenant_id, request_id))


def receipt_of(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID) -> Receipt:
    request = _load(session, tenant_id, request_id)
    if ErasureStatus(request.status) not in WITH_RECEIPT:
        raise ReceiptNotReady(f"The request is {request.status}.")
    return receipts.build(session, request)


def page(
    session: Session, *, tenant_id: uuid.UUID, status: ErasureStatus | None,
    subject: str | None, limit: int, cursor: str | None = None,
) -> ErasureRequestList:
    """Requests oldest first; ``subject`` is matched through its digest, so it finds
    completed requests too."""
    statement = select(ErasureRequest).where(ErasureRequest.tenant_id == tenant_id)
    if status is not None:
        statement = statement.where(ErasureRequest.status == status.value)
    if subject is not None:
        statement = statement.where(ErasureRequest.subject_digest == digests.digest(
            session, tenant_id=tenant_id, value=subject))
    rows, next_cursor = paging.page(session, statement, ErasureRequest, tenant_id=tenant_id,
                                    limit=limit, cursor=cursor)
    return ErasureRequestList(data=[public(session, row, with_receipt=False) for row in rows],
                              next_cursor=next_cursor)


def open_requests(session: Session, *, tenant_id: uuid.UUID, limit: int
                  ) -> tuple[list[ErasureRequestPublic], int]:
    """The first ``limit`` open requests, soonest due first, and how many are open in all."""
    is_open = col(ErasureRequest.status).in_([status.value for status in OPEN])
    where = (ErasureRequest.tenant_id == tenant_id, is_open)
    rows = session.exec(select(ErasureRequest).where(*where)
                        .order_by(col(ErasureRequest.due_at), col(ErasureRequest.id))
                        .limit(limit)).all()
    total = session.exec(select(func.count()).select_from(ErasureRequest).where(*where)).one()
    return [public(session, row, with_receipt=False) for row in rows], total


def count_by_status(session: Session, *, tenant_id: uuid.UUID) -> dict[str, int]:
    """The tenant's erasure requests by status, every status present (zero when none)."""
    rows = session.exec(
        select(ErasureRequest.status, func.count()).where(ErasureRequest.tenant_id == tenant_id)
        .group_by(col(ErasureRequest.status))).all()
    counts = {status.value: 0 for status in ErasureStatus}
    counts.update({str(status): int(n) for status, n in rows})
    return counts


def lock(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID) -> ErasureRequest:
    """The request, locked for this transaction (deliveries and staff actions queue here)."""
    return _load(session, tenant_id, request_id, for_update=True)


def public(session: Session, request: ErasureRequest, *, with_receipt: bool = True
           ) -> ErasureRequestPublic:
    status = ErasureStatus(request.status)
    shown = receipts.build(session, request) if with_receipt and status in WITH_RECEIPT else None
    return ErasureRequestPublic(
        id=request.id, subject=subject_of(request), subject_digest=request.subject_digest,
        status=status, reason=request.reason, requested_by=request.requested_by,
        due_at=request.due_at, overdue=status in OPEN and request.due_at < utcnow(),
        created_at=request.created_at, approved_at=request.approved_at,
        started_at=request.started_at, completed_at=request.completed_at,
        cancelled_at=request.cancelled_at, vacuumed_at=request.vacuumed_at,
        progress=Progress(done=request.progress_done, total=request.progress_total),
        receipt=shown, error=request.error,
    )


def subject_of(request: ErasureRequest) -> str | None:
    """The subject an open request names, as the filing gave it (None once it is closed)."""
    if request.subject is None:
        return None
    return sealing.Opener().name(request.tenant_id, request.subject,
                                 (TABLE, request.id, "subject"), request.subject,
                                 request.sealed_subject)


def _filed(request: ErasureRequest) -> ErasureFiled:
    return ErasureFiled(id=request.id, subject=subject_of(request),
                        status=ErasureStatus(request.status), due_at=request.due_at,
                        created_at=request.created_at)


def _open_for(session: Session, tenant_id: uuid.UUID, hashed: str) -> ErasureRequest | None:
    return session.exec(
        select(ErasureRequest).where(
            ErasureRequest.tenant_id == tenant_id, ErasureRequest.subject_digest == hashed,
            col(ErasureRequest.status).in_([status.value for status in OPEN]))
    ).first()


def _load(session: Session, tenant_id: uuid.UUID, request_id: uuid.UUID, *,
          for_update: bool = False) -> ErasureRequest:
    statement = select(ErasureRequest).where(ErasureRequest.tenant_id == tenant_id,
                                             ErasureRequest.id == request_id)
    if for_update:
        statement = statement.with_for_update().execution_options(populate_existing=True)
    request = session.exec(statement).first()
    if request is None:
        raise ErasureNotFound()
    return request
