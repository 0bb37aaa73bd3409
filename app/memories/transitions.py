"""The single place a memory's state changes (later: the forgetting ladder's audited home)."""

from __future__ import annotations

import uuid

from sqlmodel import Session

from app.core.models import utcnow
from app.memories.errors import IllegalTransition
from app.memories.models import Memory, MemoryState

S = MemoryState
# Restoring (quarantined/deprecated → active) is a compliance action added with that domain.
LEGAL: dict[MemoryState, frozenset[MemoryState]] = {
    S.active: frozenset({S.suspect, S.deprecated, S.quarantined, S.forgotten}),
    S.suspect: frozenset({S.active, S.deprecated, S.quarantined, S.forgotten}),
    S.deprecated: frozenset({S.quarantined, S.forgotten}),
    S.quarantined: frozenset({S.forgotten}),
    S.forgotten: frozenset(),
}


def transition(
    session: Session,
    memory: Memory,
    to_state: MemoryState,
    *,
    reason: str,
    superseded_by: uuid.UUID | None = None,
) -> None:
    """Move ``memory`` (locked by the caller) to ``to_state``; revision + 1."""
    current = MemoryState(memory.state)
    if to_state not in LEGAL[current]:
        raise IllegalTransition(f"A {current} memory cannot become {to_state} ({reason}).")
    memory.state = to_state.value
    if superseded_by is not None:
        memory.superseded_by = superseded_by
    memory.revision += 1
    memory.updated_at = utcnow()
    session.add(memory)
    session.flush()
