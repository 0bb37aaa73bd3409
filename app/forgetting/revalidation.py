"""Moving a memory along the forgetting ladder on request: confirm, reject, quarantine, release.

Every state change goes through `app.lifecycle.transitions.transition` (legality, revision,
audit). `If-Match` is optional here (API.md: "accept If-Match"); when sent, a stale revision
is refused with 412 like any edit.
"""

from __future__ import annotations

import uuid

from sqlmodel import Session, col, select

from app.core.errors import Conflict
from app.core.models import utcnow
from app.lifecycle.transitions import transition
from app.memories import queries
from app.memories.errors import IllegalTransition, RevisionMismatch
from app.memories.models import LIVE_STATES, Memory, MemoryState
from app.memories.schemas import MemoryPublic
from app.memories.service import expected_revision

LIVE = [state.value for state in LIVE_STATES]


class SlotTaken(Conflict):
    slug, title = "slot-taken", "Another live memory holds this slot"


def confirm(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID,
            if_match: str | None, actor: str) -> MemoryPublic:
    """Re-validation passed: suspect → active (or an active memory re-validated)."""
    memory = _locked(session, tenant_id, memory_id, if_match)
    if memory.state == MemoryState.suspect:
        transition(session, memory, MemoryState.active, reason="confirmed", actor=actor)
    elif memory.state == MemoryState.active:
        memory.revision += 1  # re-validation is a change: writers holding the old ETag lose
    else:
        raise IllegalTransition(f"A {memory.state} memory cannot be confirmed.")
    memory.last_validated_at = utcnow()
    memory.updated_at = memory.last_validated_at
    session.add(memory)
    session.flush()
    return queries.view(session, memory)


def move(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, if_match: str | None,
         to_state: MemoryState, reason: str, actor: str) -> MemoryPublic:
    """Reject (→ deprecated), quarantine, or release (quarantined → active)."""
    memory = _locked(session, tenant_id, memory_id, if_match)
    if to_state is MemoryState.active and memory.key is not None:
        _slot_free(session, memory)
    transition(session, memory, to_state, reason=reason, actor=actor)
    return queries.view(session, memory)


def _slot_free(session: Session, memory: Memory) -> None:
    holder = session.exec(
        select(Memory.id).where(
            Memory.tenant_id == memory.tenant_id, Memory.subject == memory.subject,
            Memory.key == memory.key, col(Memory.state).in_(LIVE), Memory.id != memory.id,
        )
    ).first()
    if holder is not None:
        raise SlotTaken(f"Another live memory ({holder}) holds this subject's slot now.")


def _locked(session: Session, tenant_id: uuid.UUID, memory_id: uuid.UUID,
            if_match: str | None) -> Memory:
    memory = queries.load(session, tenant_id=tenant_id, memory_id=memory_id, for_update=True)
    if if_match is not None and memory.revision != expected_revision(if_match):
        raise RevisionMismatch(memory.revision)
    return memory
