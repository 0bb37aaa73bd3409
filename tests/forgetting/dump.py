"""Read every row of every table as the owner, to prove text is gone from the database."""

from __future__ import annotations

from typing import Any


def database_text(owner_conn: Any) -> str:
    tables = [row[0] for row in owner_conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    parts = []
    for table in tables:
        for row in owner_conn.execute(f'SELECT * FROM "{table}"'):
            parts.append(repr(row))
    return "\n".join(parts)
