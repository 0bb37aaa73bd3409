"""Moving a memory along the forgetting ladder on request: confirm, reject, quarantine, release.

Every move goes through the lifecycle (`app.memories.lifecycle`: `transition`, `confirm`;
legality, revision, audit). `If-Match` is optional here (docs/api.md: "accept If-Match"); when sent,
a stale revision is refused with 412 like any edit.
"""

from __future__ import annotations

import uuid

from sqlmodel import Session

from app.core.errors import Conflict
from app.memories import lifecycle, store
from app.memories.errors import RevisionMismatch
from app.memories.models import Memory, MemoryState
from app.memories.schemas import MemoryPublic
from app.memories.service import expected_revision


class SlotTaken(Conflict):
    slug, title = "slot-taken", "Another live memory holds this slot"


def confirm(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID,
            if_match: str | None, actor: str) -> MemoryPublic:
    """Re-validation passed: suspect → active (or an active memory re-validated)."""
    memory = _locked(session, tenant_id, memory_id, if_match)
    lifecycle.confirm(session, memory, actor=actor)
    return store.view(session, memory)


def move(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, if_match: str | None,
         to_state: MemoryState, reason: str, actor: str) -> MemoryPublic:
    """Reject (→ deprecated), quarantine, or release (quarantined → active)."""
    memory = _locked(session, tenant_id, memory_id, if_match)
    if to_state is MemoryState.active and memory.key is not None:
        _slot_free(session, memory, key=memory.key)
    lifecycle.transition(session, memory, to_state, reason=reason, actor=actor)
    return store.view(session, memory)


def _slot_free(session: Session, memory: Memory, *, key: str) -> None:
    holder = store.slot_holder(session, tenant_id=memory.tenant_id, subject=memory.subject,
                               key=key, other_than=memory.id)
    if holder is not None:
        raise SlotTaken(f"Another live memory ({holder}) holds this subject's slot now.")


def _locked(session: Session, tenant_id: uuid.UUID, memory_id: uuid.UUID,
            if_match: str | None) -> Memory:
    memory = store.load(session, tenant_id=tenant_id, memory_id=memory_id, for_update=True)
    if if_match is not None and memory.revision != expected_revision(if_match):
        raise RevisionMismatch(memory.revision)
    return memory
