"""Legal holds: placed and released by compliance, audited, never deleted.

While an active hold covers a memory, nothing destroys its content: the lifecycle's
`destroy_content` refuses it (`LegalHold`, 409), and paths acting on many memories (forget by
description, retention, erasure) ask `covering` first and leave the held ones out. Recall,
supersession, decay and consolidation treat held memories as usual: they destroy nothing.
"""

from __future__ import annotations

import uuid

from sqlmodel import Session

from app.audit import service as audit
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.holds import store
from app.holds.errors import HoldNotFound
from app.holds.models import HoldScope, LegalHold
from app.holds.schemas import (
    HoldCreate,
    LegalHoldDetail,
    LegalHoldList,
    LegalHoldPublic,
    MemoryIdsHoldCreate,
    MemoryIdsScope,
    SourceScope,
    SubjectHoldCreate,
    SubjectScope,
)
from app.keys import digests
from app.memories import queries as memory_queries
from app.memories import sealing
from app.memories import store as memories
from app.memories.errors import InvalidReference
from app.memories.models import MemoryState
from app.webhooks import service as webhooks
from app.webhooks.models import WebhookEvent

TARGET = "legal_hold"
RESUME_TASK = "erasure.resume"  # named, not imported: the erasure package imports this one


def covering(
    session: Session, *, tenant_id: uuid.UUID, memory_ids: list[uuid.UUID]
) -> dict[uuid.UUID, uuid.UUID]:
    """Which of ``memory_ids`` an active hold covers: memory ID → hold ID (the oldest hold
    when several do). One statement for any number of memories; the rule is the memory
    store's `COVERS`."""
    return memories.held_by(session, tenant_id=tenant_id, ids=memory_ids)


def place(
    session: Session, *, tenant_id: uuid.UUID, body: HoldCreate, actor: str,
    hold_id: uuid.UUID | None = None,
) -> LegalHoldPublic:
    """Place a hold (audited `legal_hold.placed`). ``hold_id`` comes from the request's
    Idempotency-Key: a redelivery after its record expired finds the hold it placed."""
    if hold_id is not None:
        existing = store.find(session, tenant_id=tenant_id, hold_id=hold_id)
        if existing is not None:
            return _public(session, existing)
    memory_ids: list[uuid.UUID] = []
    if isinstance(body, MemoryIdsHoldCreate):
        memory_ids = _usable_memories(session, tenant_id=tenant_id, ids=body.memory_ids)
    scope = (HoldScope.subject if isinstance(body, SubjectHoldCreate)
             else HoldScope.memory_ids if isinstance(body, MemoryIdsHoldCreate)
             else HoldScope.source)
    subject, source = getattr(body, "subject", None), getattr(body, "source", None)
    hold = LegalHold(
        id=hold_id or uuid.uuid4(), tenant_id=tenant_id, scope=scope.value,
        # Stored as their digests, as memories store theirs; the strings kept sealed.
        subject=digests.optional_subject(tenant_id, subject),
        source=digests.optional_source(tenant_id, source),
        reason=body.reason, case_ref=body.case_ref, created_by=actor,
    )
    hold.sealed_subject, hold.sealed_source = sealing.seal_hold_names(
        tenant_id, hold.id, subject, source)
    store.insert(session, hold, memory_ids=memory_ids)
    # Names no subject or source: the audit chain outlives erasures, the hold's row does not
    # have to.
    details: dict[str, str | int] = {"scope": hold.scope}
    if memory_ids:
        details["memories"] = len(memory_ids)
    if hold.case_ref is not None:
        details["case_ref"] = hold.case_ref
    audit.record(session, tenant_id=tenant_id, actor=actor, action="legal_hold.placed",
                 target_kind=TARGET, target_id=hold.id, reason=hold.reason, details=details)
    return _public(session, hold, memory_ids=memory_ids)


def get(session: Session, *, tenant_id: uuid.UUID, hold_id: uuid.UUID) -> LegalHoldDetail:
    hold = store.find(session, tenant_id=tenant_id, hold_id=hold_id)
    if hold is None:
        raise HoldNotFound()
    held = memory_queries.count_held(session, tenant_id=tenant_id, hold_id=hold.id,
                                     subject=hold.subject, source=hold.source)
    return LegalHoldDetail(**_public(session, hold).model_dump(), held_count=held)


def holds(
    session: Session, *, tenant_id: uuid.UUID, active: bool | None, limit: int,
    cursor: str | None = None,
) -> LegalHoldList:
    """One page of the tenant's holds, oldest first; ``active`` true: only unreleased ones,
    false: only released ones. The cursor is the last ID of the previous page; one naming no
    hold of this tenant ends the listing."""
    shown, next_cursor = store.page(session, tenant_id=tenant_id, active=active, limit=limit,
                                    cursor=cursor)
    ids = store.memory_ids_of(session, [h.id for h in shown if h.scope == HoldScope.memory_ids])
    return LegalHoldList(
        data=[_public(session, hold, memory_ids=ids.get(hold.id)) for hold in shown],
        next_cursor=next_cursor,
    )


def release(session: Session, *, tenant_id: uuid.UUID, hold_id: uuid.UUID, actor: str,
            reason: str | None = None) -> None:
    """Release a hold: the record stays, with `released_at`; ``reason`` (why it was
    released) goes into the audit event. Releasing a released hold changes nothing (the row
    lock orders two releases: one of them releases)."""
    hold = store.find(session, tenant_id=tenant_id, hold_id=hold_id, for_update=True)
    if hold is None:
        raise HoldNotFound()
    if hold.released_at is not None:
        return
    hold.released_at = utcnow()
    hold.released_by = actor
    session.add(hold)
    session.flush()
    released(session, hold=hold, actor=actor, reason=(reason or '').strip() or None)


def released(session: Session, *, hold: LegalHold, actor: str, reason: str | None = None
             ) -> None:
    """What follows a release, in the releasing transaction: the audit event
    `legal_hold.released`, the webhook event of the same name, and the erasures that ended
    `on_hold` resume (`erasure.resume`, sent after the commit: from then on the memories the
    hold covered are destroyable again, unless another hold covers them).
    """
    audit.record(session, tenant_id=hold.tenant_id, actor=actor, action="legal_hold.released",
                 target_kind=TARGET, target_id=hold.id, from_state="active",
                 to_state="released", reason=reason, details={"scope": hold.scope})
    webhooks.emit_each(session, tenant_id=hold.tenant_id, event=WebhookEvent.legal_hold_released,
                       payloads=[{"hold_id": str(hold.id), "scope": hold.scope,
                                  "released_at": (hold.released_at or utcnow()).isoformat()}])
    enqueue_job(RESUME_TASK, hold.tenant_id)


def _usable_memories(
    session: Session, *, tenant_id: uuid.UUID, ids: list[uuid.UUID]
) -> list[uuid.UUID]:
    """The IDs, each a memory of this tenant with content; locked, so a forget running
    meanwhile either finishes first (and the ID is refused) or meets the hold."""
    wanted = sorted(set(ids))
    rows = memories.lock(session, tenant_id=tenant_id, ids=wanted)
    unknown = [str(memory_id) for memory_id in wanted
               if memory_id not in rows or rows[memory_id].state == MemoryState.forgotten]
    if unknown:
        raise InvalidReference(
            f"{len(unknown)} of the memory IDs name no memory of this tenant (or a forgotten "
            "one); nothing was held.", unknown=unknown)
    return wanted


def _public(
    session: Session, hold: LegalHold, *, memory_ids: list[uuid.UUID] | None = None
) -> LegalHoldPublic:
    scope: SubjectScope | MemoryIdsScope | SourceScope
    if hold.scope == HoldScope.subject:
        scope = SubjectScope(subject=sealing.Opener().name(
            hold.tenant_id, hold.subject or "", ("legal_hold", hold.id, "subject"),
            hold.subject or "", hold.sealed_subject))
    elif hold.scope == HoldScope.source:
        scope = SourceScope(source=sealing.open_tenant_name(
            hold.tenant_id, ("legal_hold", hold.id, "source"), hold.sealed_source)
            or hold.source or "")
    else:
        if memory_ids is None:
            memory_ids = store.memory_ids_of(session, [hold.id])[hold.id]
        scope = MemoryIdsScope(memory_ids=memory_ids)
    return LegalHoldPublic(
        id=hold.id, scope=scope, reason=hold.reason, case_ref=hold.case_ref,
        created_at=hold.created_at, created_by=hold.created_by, released_at=hold.released_at,
        released_by=hold.released_by,
    )


def active_count(session: Session, *, tenant_id: uuid.UUID) -> int:
    """How many holds of the tenant are in force."""
    return store.count_active(session, tenant_id=tenant_id)
