"""A memory's lifecycle: the one place its state, its revision and its content's end change.

- `LEGAL` is the ladder's table of legal moves; `transition` makes one, `doubt` adds a flag
  (an active memory becomes suspect) and `confirm` settles a re-validation.
- `new_revision` is the single "new revision" step: revision + 1, `updated_at`, and the
  change's audit event. Every change to a memory calls it: update, revert and a slot's new
  version (`app/memories/service.py`), strike, confirm, doubt and every transition; nothing
  else assigns `revision`, and nothing but `transition` assigns `state` — except
  `tombstone`, its set form for many tombstones at once, which writes the same columns and
  the same audit events in a statement each (`store.tombstone_rows`, `audit.record_many`).
  Audit events record state transitions, doubts (a flag on an already suspect memory, naming
  who raised it) and every change to a memory's content (`authored`: `memory.created`,
  `memory.corrected`, `memory.reverted`, `memory.struck`, naming the version), with IDs,
  states, the revision and version numbers, never content. Confirming an active memory gets
  none: it changes neither state nor content. A write's event (`written`) is recorded after
  its last row lock, or handed back so a bulk write appends all its items' in one statement
  (`record`).
- `destroy_content` is the one way content leaves a memory: the tombstone (forget, retention's
  deletion, forget by description with delete) and the strike (sentences struck from the
  current text; with delete also from older versions and stored answers). Legal holds are
  checked there, once, for every destroying path: a held memory is refused with `LegalHold`.

Columns: the lifecycle sets state, revision, flags, superseded_by, updated_at,
state_changed_at and last_validated_at on rows the store (`app/memories/store.py`) loaded and
locked; every statement, and every other column, is the store's. Callers take their row locks
first: an audit append holds the tenant's chain lock until the transaction ends.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.idempotency import store as operations
from app.memories import store
from app.memories.errors import IllegalTransition, LegalHold
from app.memories.models import Memory, MemoryState, MemoryVersion

S = MemoryState
# Every change to a memory's content is one of these events (API.md, Audit).
CREATED, CORRECTED, REVERTED, STRUCK = (
    "memory.created", "memory.corrected", "memory.reverted", "memory.struck")
# Restoring (quarantined/deprecated → active) is a compliance action added with that domain.
LEGAL: dict[MemoryState, frozenset[MemoryState]] = {
    S.active: frozenset({S.suspect, S.deprecated, S.quarantined, S.forgotten}),
    S.suspect: frozenset({S.active, S.deprecated, S.quarantined, S.forgotten}),
    S.deprecated: frozenset({S.quarantined, S.forgotten}),
    # Back to active only through the compliance key's explicit release (invariant 1).
    S.quarantined: frozenset({S.forgotten, S.active}),
    S.forgotten: frozenset(),
}


@dataclass(frozen=True)
class Event:
    """The audit event of a change; `new_revision` adds the target and the new revision."""

    action: str
    actor: str
    reason: str | None = None
    from_state: str | None = None
    to_state: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Strike:
    """What striking sentences from a memory leaves."""

    text: str  # the new current text
    embedding: list[float] | None
    sentences: int  # how many were struck from the current text
    # Older versions and stored answers lose the sentences too (else a revert undoes it).
    delete: bool
    # With delete: older versions that carried a struck sentence → their text without it.
    redacted: Mapping[uuid.UUID, str] = field(default_factory=dict)


def authored(
    action: str, version: MemoryVersion, *, actor: str, reason: str | None = None,
    **details: Any,
) -> Event:
    """The event of a change to a memory's content: who made it and the version it made
    current, by number and ID; never the text, which an erasure must be able to take."""
    return Event(action=action, actor=actor, reason=reason,
                 details={"version": version.seq, "version_id": str(version.id), **details})


def written(memory: Memory, version: MemoryVersion, *, actor: str, new: bool) -> audit.Entry:
    """A write's event, for `record`: `memory.created`, or `memory.corrected` for a slot's
    new version (a write to the same key)."""
    # The expiry it leaves, for `as_of` reads: on every slot rewrite, on a create if set.
    expiry = ({} if new and memory.expires_at is None else
              {"expires_at": memory.expires_at.isoformat() if memory.expires_at else None})
    event = (authored(CREATED, version, actor=actor, **expiry) if new
             else authored(CORRECTED, version, actor=actor, via="key", **expiry))
    return audit.Entry(actor=actor, action=event.action, target_kind="memory",
                       target_id=str(memory.id),
                       details={"revision": memory.revision, **event.details})


def record(session: Session, *, tenant_id: uuid.UUID, entries: Sequence[audit.Entry]) -> None:
    """Append writes' events (`written`) in one statement, after every row lock they took."""
    audit.record_many(session, tenant_id=tenant_id, entries=entries)


def new_revision(
    session: Session, memory: Memory, *, event: Event | None = None,
    at: datetime | None = None, flush: bool = True,
) -> None:
    """The one step every change of a (locked) memory takes: revision + 1, `updated_at`, and
    the change's audit event when it has one.

    A job changing thousands passes ``flush=False`` and flushes once at the end: the updates
    and audit events then go out as a few batched statements.
    """
    memory.revision += 1
    memory.updated_at = at or utcnow()
    store.save(session, memory)  # flushed with the audit event: one flush per change
    if event is not None:
        audit.record(
            session, tenant_id=memory.tenant_id, actor=event.actor, action=event.action,
            target_kind="memory", target_id=memory.id, from_state=event.from_state,
            to_state=event.to_state, reason=event.reason,
            details={"revision": memory.revision, **event.details}, flush=flush,
        )
    elif flush:
        session.flush()


def transition(
    session: Session,
    memory: Memory,
    to_state: MemoryState,
    *,
    reason: str,
    actor: str,
    superseded_by: uuid.UUID | None = None,
    flush: bool = True,
    details: Mapping[str, Any] | None = None,
) -> None:
    """Move ``memory`` (locked by the caller) to ``to_state``; revision + 1; audited."""
    current = MemoryState(memory.state)
    if to_state not in LEGAL[current]:
        raise IllegalTransition(f"A {current} memory cannot become {to_state} ({reason}).")
    memory.state = to_state.value
    if to_state is S.active:
        memory.flags = []  # the doubts that made it suspect are settled
    if superseded_by is not None:
        memory.superseded_by = superseded_by
    memory.state_changed_at = now = utcnow()  # retention counts from here
    new_revision(session, memory, at=now, flush=flush, event=Event(
        action="memory.transition", actor=actor, reason=reason[:500],
        from_state=current.value, to_state=to_state.value,
        details={**(details or {}),
                 "superseded_by": str(superseded_by) if superseded_by else None},
    ))


def doubt(
    session: Session, memory: Memory, flag: str, *, reason: str, actor: str, flush: bool = True,
    details: Mapping[str, Any] | None = None,
) -> bool:
    """Add ``flag`` to a locked live memory: an active one becomes suspect, an already
    suspect one keeps its state but the new doubt still moves its revision; audited either way.

    False, and nothing changes, when the memory carries the flag already (a rerun).
    """
    if flag in memory.flags:
        return False
    memory.flags = [*memory.flags, flag]
    if memory.state == MemoryState.active:
        # The flag in the event too: an `as_of` read replays a memory's flags from its trail.
        transition(session, memory, MemoryState.suspect, reason=reason, actor=actor,
                   flush=flush, details={**(details or {}), "flag": flag})
    else:
        # No state move, but a new doubt (and who raised it) belongs in the memory's trail.
        new_revision(session, memory, flush=flush, event=Event(
            action="memory.flagged", actor=actor, reason=reason[:500],
            details={**(details or {}), "flag": flag},
        ))
    return True


EXPIRED = "expired"


def expire(session: Session, memory: Memory, *, actor: str, flush: bool = True) -> None:
    """A locked live memory whose `expires_at` has passed becomes `deprecated` with flag
    `expired` (audited); retention takes it from there. Recall and live listings left it out
    from the instant itself: this only records it."""
    if EXPIRED not in memory.flags:
        memory.flags = [*memory.flags, EXPIRED]
    transition(session, memory, S.deprecated, reason=EXPIRED, actor=actor, flush=flush,
               details={"flag": EXPIRED,
                        "expires_at": memory.expires_at.isoformat() if memory.expires_at
                        else None})


def confirm(session: Session, memory: Memory, *, actor: str) -> None:
    """Re-validation passed: a suspect memory becomes active (audited), an active one is
    re-validated; either way writers holding the old ETag lose."""
    if memory.state == MemoryState.suspect:
        transition(session, memory, MemoryState.active, reason="confirmed", actor=actor,
                   flush=False)
    elif memory.state == MemoryState.active:
        new_revision(session, memory, flush=False)
    else:
        raise IllegalTransition(f"A {memory.state} memory cannot be confirmed.")
    memory.last_validated_at = memory.updated_at
    session.flush()


def destroy_content(
    session: Session, memory: Memory, *, reason: str, actor: str, strike: Strike | None = None,
) -> None:
    """Take content from a locked memory, the one way any path does.

    Without ``strike``: the tombstone. State `forgotten` and the content purged in the same
    transaction: every version's text and vector, the key, dependencies, metadata and flags,
    and the stored answers that showed it. The ID, subject, source and the audit trail stay.

    With ``strike``: a new current version without the struck sentences, audited as
    `memory.struck`. With ``strike.delete`` the older versions lose those sentences (and their
    vectors, which encode them) and stored answers naming the memory are redacted; without it
    they stay, so the strike can be undone by a revert.

    Either way a memory that an active legal hold covers is refused first (`LegalHold`,
    409), before anything changes: the check is here, once, so every destroying path (forget,
    DELETE, forget by description, strike, retention, erasure) meets it. Callers that act on
    many memories ask `store.held_by` first and leave the held ones out; this check is the
    guarantee.
    """
    if strike is None:
        tombstone(session, [memory], reason=reason, actor=actor)
        return
    if store.held_by(session, tenant_id=memory.tenant_id, ids=[memory.id]):
        raise LegalHold(memory.id)
    if strike.delete:
        store.redact_versions(session, memory, strike.redacted)
    version = store.append_version(session, memory, strike.text, strike.embedding)
    if strike.delete:
        # Before the audit append: its chain lock is taken last, after every row lock.
        operations.redact_answers(session, memory_id=memory.id, state=memory.state)
    new_revision(session, memory, event=authored(
        STRUCK, version, actor=actor, reason=reason, sentences=strike.sentences,
        redacted_versions=len(strike.redacted) if strike.delete else 0))


@dataclass(frozen=True)
class Tombstoned:
    versions: int = 0  # versions emptied
    answers: int = 0  # stored answers redacted


def tombstone(
    session: Session, memories: Sequence[Memory], *, reason: str, actor: str,
) -> Tombstoned:
    """The tombstone of many locked memories of one tenant at once (what `destroy_content`
    does for one): each becomes `forgotten` (audited), every version's text and vector, the
    key, dependencies, metadata and flags are purged, and the stored answers that showed them
    are redacted, in a few statements for the whole set. Refused with `LegalHold`, before
    anything changes, when an active hold covers any of them. Returns how many versions and
    stored answers it emptied.
    """
    if not memories:
        return Tombstoned()
    tenant_id = memories[0].tenant_id
    ids = [memory.id for memory in memories]
    held = store.held_by(session, tenant_id=tenant_id, ids=ids)
    if held:
        raise LegalHold(min(held))
    before = {memory.id: (MemoryState(memory.state), memory.revision) for memory in memories}
    for state, _revision in before.values():
        if S.forgotten not in LEGAL[state]:
            raise IllegalTransition(f"A {state} memory cannot become forgotten ({reason}).")
    versions = store.purge_contents(session, memories)
    answers = operations.redact_answers_of(session, memory_ids=ids,
                                           state=MemoryState.forgotten.value)
    # `transition` and `new_revision` for the whole batch: the same columns and events, in
    # two statements instead of an ORM update and an audit object per memory.
    store.tombstone_rows(session, memories, at=utcnow())
    audit.record_many(session, tenant_id=tenant_id, entries=[
        audit.Entry(actor=actor, action="memory.transition", target_kind="memory",
                    target_id=str(memory_id), reason=reason[:500], from_state=state.value,
                    to_state=S.forgotten.value,
                    details={"revision": revision + 1, "superseded_by": None})
        for memory_id, (state, revision) in before.items()])
    return Tombstoned(versions=versions, answers=answers)
