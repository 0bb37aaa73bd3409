"""Redacting the stored answers that showed a memory's content, when the content goes.

The memory's own rows are purged by `app.lifecycle.transitions.destroy_content`, which calls
this in the same transaction.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlmodel import Session

from app.memories.models import Memory

# Replayable answers that describe a memory keep its ID and state, not the text they showed.
_REDACT_OPERATIONS = text(
    """
    UPDATE operation
    SET response_body = jsonb_build_object('id', CAST(:memory_id AS text),
                                           'state', CAST(:state AS text)),
        response_headers = '{}'::jsonb
    WHERE response_id = CAST(:memory_id AS text)
    """
)


def redact_answers(session: Session, memory: Memory) -> None:
    """Rewrite every stored answer naming ``memory`` to `{"id", "state"}` (its state now)."""
    session.execute(_REDACT_OPERATIONS, {"memory_id": str(memory.id), "state": memory.state})

