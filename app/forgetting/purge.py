"""Purging a forgotten memory's content from every table, in the forget's own transaction.

What stays is the tombstone: the memory row with its ID, subject, source and state
`forgotten`, its version rows with empty text and no embedding (the generated search vector
empties with the text), and content-free audit and retraction rows.
"""

from __future__ import annotations

from sqlalchemy import update
from sqlmodel import Session, col

from app.idempotency import store as operations
from app.memories.models import Memory, MemoryVersion


def redact_answers(session: Session, memory: Memory) -> None:
    """Rewrite every stored answer naming ``memory`` to `{"id", "state"}` (its state now):
    replayable answers keep its ID and state, not the text they showed."""
    operations.redact_answers(session, memory_id=memory.id, state=memory.state)


def purge_memory(session: Session, memory: Memory) -> None:
    """Remove the content of ``memory`` (already in state `forgotten`)."""
    session.execute(
        update(MemoryVersion)
        .where(col(MemoryVersion.memory_id) == memory.id)
        .values(text="", embedding=None)
        # Sync loaded versions by the ids the UPDATE returns; the default ("evaluate") walks
        # the whole identity map on every call, quadratic over a job purging thousands.
        .execution_options(synchronize_session="fetch")
    )
    memory.key = None
    memory.depends_on = {}
    memory.meta = {}
    memory.flags = []
    session.add(memory)
    redact_answers(session, memory)
    session.flush()
