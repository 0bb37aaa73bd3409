"""The subject's retraction records, as recall shows them beside its results.

Read with recall's own read-only SQL, in its pipeline; `app/forgetting/retractions.py` writes
them.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import DictRow, dict_row

from app.memories import sealing
from app.recall.schemas import RetractionPublic

RECALLED_RETRACTIONS = 20


# Only what recall shows (never `memory_ids`); newest first; as of an instant, those filed
# by then.
_RECENT_SQL = (
    "SELECT id, sealed_about, created_at, memory_count FROM retraction"
    " WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s{by_then}"
    " ORDER BY created_at DESC, id LIMIT %(limit)s"
)


def recent(
    conn: psycopg.Connection[Any], *, tenant_id: uuid.UUID, subject: str,
    limit: int = RECALLED_RETRACTIONS, at: datetime | None = None,
) -> psycopg.Cursor[DictRow]:
    """The subject's latest retractions (id, sealed_about, created_at, memory_count), sent now and
    fetched from the returned cursor when needed (in pipeline mode, with the other reads)."""
    cursor = conn.cursor(row_factory=dict_row)
    return cursor.execute(
        _RECENT_SQL.format(by_then="" if at is None else " AND created_at <= %(at)s"),
        {"tenant_id": tenant_id, "subject": subject, "limit": limit, "at": at})


def shown(cursor: psycopg.Cursor[DictRow], *, tenant_id: uuid.UUID,
          subject: str) -> list[RetractionPublic]:
    """The retractions `recent` sent, as recall shows them (their `about` opened)."""
    opener = sealing.Opener()
    return [RetractionPublic(id=row["id"], created_at=row["created_at"],
                             about=opener.about(tenant_id, subject, row["id"],
                                                row["sealed_about"]),
                             memory_count=row["memory_count"])
            for row in cursor.fetchall()]
