"""Retraction records: what stays visible of a forget (never the forgotten text)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import DictRow, dict_row
from sqlmodel import Session

from app.forgetting.models import Retraction

RECALLED_RETRACTIONS = 20


def record(
    session: Session, *, tenant_id: uuid.UUID, subject: str, about: str | None,
    memory_ids: Sequence[uuid.UUID],
) -> Retraction:
    retraction = Retraction(
        tenant_id=tenant_id, subject=subject, about=about,
        memory_ids=[str(memory_id) for memory_id in memory_ids], memory_count=len(memory_ids),
    )
    session.add(retraction)
    session.flush()
    return retraction


# Only what recall shows (never `memory_ids`); newest first.
_RECENT_SQL = (
    "SELECT id, about, created_at, memory_count FROM retraction"
    " WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
    " ORDER BY created_at DESC, id LIMIT %(limit)s"
)


def recent(
    conn: psycopg.Connection[Any], *, tenant_id: uuid.UUID, subject: str,
    limit: int = RECALLED_RETRACTIONS,
) -> psycopg.Cursor[DictRow]:
    """The subject's latest retractions (id, about, created_at, memory_count), sent now and
    fetched from the returned cursor when needed (in pipeline mode, with the other reads)."""
    cursor = conn.cursor(row_factory=dict_row)
    return cursor.execute(_RECENT_SQL, {"tenant_id": tenant_id, "subject": subject,
                                        "limit": limit})
