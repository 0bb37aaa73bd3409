"""The subject's retraction records, as recall shows them beside its results.

Read with recall's own read-only SQL, in its pipeline; `app/forgetting/retractions.py` writes
them.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from psycopg.rows import DictRow, dict_row

RECALLED_RETRACTIONS = 20


# Only what recall shows (never `memory_ids`); newest first.
_RECENT_SQL = (
    "SELECT id, sealed_about, created_at, memory_count FROM retraction"
    " WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
    " ORDER BY created_at DESC, id LIMIT %(limit)s"
)


def recent(
    conn: psycopg.Connection[Any], *, tenant_id: uuid.UUID, subject: str,
    limit: int = RECALLED_RETRACTIONS,
) -> psycopg.Cursor[DictRow]:
    """The subject's latest retractions (id, sealed_about, created_at, memory_count), sent now and
    fetched from the returned cursor when needed (in pipeline mode, with the other reads)."""
    cursor = conn.cursor(row_factory=dict_row)
    return cursor.execute(_RECENT_SQL, {"tenant_id": tenant_id, "subject": subject,
                                        "limit": limit})
