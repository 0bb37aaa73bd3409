"""The single place a memory's state changes: legality, revision and audit in one step."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.memories.errors import IllegalTransition
from app.memories.models import Memory, MemoryState

S = MemoryState
# Restoring (quarantined/deprecated → active) is a compliance action added with that domain.
LEGAL: dict[MemoryState, frozenset[MemoryState]] = {
    S.active: frozenset({S.suspect, S.deprecated, S.quarantined, S.forgotten}),
    S.suspect: frozenset({S.active, S.deprecated, S.quarantined, S.forgotten}),
    S.deprecated: frozenset({S.quarantined, S.forgotten}),
    # Back to active only through the compliance key's explicit release (invariant 1).
    S.quarantined: frozenset({S.forgotten, S.active}),
    S.forgotten: frozenset(),
}


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
    """Move ``memory`` (locked by the caller) to ``to_state``; revision + 1; audited.

    Callers take their row locks first: the audit append holds the tenant's chain lock until
    the transaction ends. A job moving thousands passes ``flush=False`` and flushes once at
    the end: the memory updates and audit events then go out as a few batched statements.
    """
    current = MemoryState(memory.state)
    if to_state not in LEGAL[current]:
        raise IllegalTransition(f"A {current} memory cannot become {to_state} ({reason}).")
    memory.state = to_state.value
    if to_state is S.active:
        memory.flags = []  # the doubts that made it suspect are settled
    if superseded_by is not None:
        memory.superseded_by = superseded_by
    memory.revision += 1
    memory.updated_at = memory.state_changed_at = utcnow()  # retention counts from here
    session.add(memory)  # flushed with the audit event: one flush per move, not two
    audit.record(
        session, tenant_id=memory.tenant_id, actor=actor, action="memory.transition",
        target_kind="memory", target_id=memory.id, from_state=current.value,
        to_state=to_state.value, reason=reason[:500],
        details={**(details or {}), "revision": memory.revision,
                 "superseded_by": str(superseded_by) if superseded_by else None},
        flush=flush,
    )


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
        transition(session, memory, MemoryState.suspect, reason=reason, actor=actor,
                   flush=flush, details=details)
    else:
        memory.revision += 1
        memory.updated_at = utcnow()
        session.add(memory)
        # No state move, but a new doubt (and who raised it) belongs in the memory's trail.
        audit.record(
            session, tenant_id=memory.tenant_id, actor=actor, action="memory.flagged",
            target_kind="memory", target_id=memory.id, reason=reason[:500],
            details={**(details or {}), "revision": memory.revision, "flag": flag},
            flush=flush,
        )
    return True
