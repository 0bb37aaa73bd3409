"""Redacting the stored answers that showed a memory's content, when the content goes.

The memory's own rows are purged by `app.lifecycle.transitions.destroy_content`, which calls
this in the same transaction.
"""

from __future__ import annotations

from sqlmodel import Session

from app.idempotency import store as operations
from app.memories.models import Memory


def redact_answers(session: Session, memory: Memory) -> None:
    """Rewrite every stored answer naming ``memory`` to `{"id", "state"}` (its state now):
    replayable answers keep its ID and state, not the text they showed."""
    operations.redact_answers(session, memory_id=memory.id, state=memory.state)

