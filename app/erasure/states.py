"""The erasure request's state machine: the one place its `status` changes.

    pending_approval → pending → running → awaiting_artifacts → completed
                 ↘ cancelled ↙      ↓  ↖         (artifacts acknowledged)
                                 on_hold          (a hold released: running again)
                                    running → failed (→ running again on a retry)

Every move is audited (`erasure.<status>`) with the request's ID, the two statuses and the
actor, never the subject.
"""

from __future__ import annotations

from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.erasure.errors import ErasureStateConflict
from app.erasure.models import ErasureRequest, ErasureStatus

E = ErasureStatus
LEGAL: dict[ErasureStatus, frozenset[ErasureStatus]] = {
    E.pending_approval: frozenset({E.pending, E.cancelled}),
    E.pending: frozenset({E.running, E.cancelled}),
    E.running: frozenset({E.awaiting_artifacts, E.completed, E.on_hold, E.failed}),
    E.on_hold: frozenset({E.running}),
    E.awaiting_artifacts: frozenset({E.completed}),
    E.failed: frozenset({E.running}),
    E.completed: frozenset(),
    E.cancelled: frozenset(),
}
TARGET = "erasure_request"


def move(
    session: Session, request: ErasureRequest, to: ErasureStatus, *, actor: str,
    reason: str | None = None,
) -> None:
    """Move a locked request to ``to`` (refused with 409 when the table has no such move),
    set the timestamp that status carries, audit it."""
    current = E(request.status)
    if to not in LEGAL[current]:
        raise ErasureStateConflict(f"A {current} erasure request cannot become {to}.")
    now = utcnow()
    request.status = to.value
    if to is E.pending and current is E.pending_approval:
        request.approved_at = now
    elif to is E.running and request.started_at is None:
        request.started_at = now
    elif to is E.completed:
        request.completed_at = now
    elif to is E.cancelled:
        request.cancelled_at = now
    if to is not E.failed:
        request.error = None
    if to in (E.completed, E.cancelled):
        # From here on the subject is its receipt digest only.
        request.subject = request.sealed_subject = None
    session.add(request)
    session.flush()
    audit.record(session, tenant_id=request.tenant_id, actor=actor, action=f"erasure.{to.value}",
                 target_kind=TARGET, target_id=request.id, from_state=current.value,
                 to_state=to.value, reason=reason)
