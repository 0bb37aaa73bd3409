"""Memories loaded in bulk for recall's tests, where the write path is not under test."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg

from app.keys import digests
from app.memories import search_terms
from app.recall import candidates
from bench import sealed

# (memory ID, subject, text, vector or None)
Row = tuple[uuid.UUID, str, str, Sequence[float] | None]


def load(conn: psycopg.Connection[Any], tenant_id: uuid.UUID, rows: Sequence[Row]) -> None:
    """Active memories, each with one current version (COPY, foreign keys as loaded), then
    fresh statistics, as autovacuum would leave them."""
    versions = [(uuid.uuid4(), *row) for row in rows]
    with conn.transaction(), conn.cursor() as cur:
        with cur.copy("COPY memory (id, tenant_id, subject, sealed_subject, volatility, state,"
                      " revision) FROM STDIN") as copy:
            for _, memory_id, subject, _, _ in versions:
                named = sealed.subject(tenant_id, memory_id, subject)
                copy.write_row((memory_id, tenant_id, *named, "preferential", "active", 1))
        stored = sealed.stored(conn, tenant_id, [(row[0], row[2], row[3]) for row in versions])
        with cur.copy("COPY memory_version (id, tenant_id, memory_id, seq, sealed_text,"
                      " search, embedding) FROM STDIN") as copy:
            for version_id, memory_id, _, _, vector in versions:
                copy.write_row((version_id, tenant_id, memory_id, 1, *stored[version_id],
                                None if vector is None else candidates.vector_literal(vector)))
        cur.execute("UPDATE memory m SET current_version_id = v.id FROM memory_version v"
                    " WHERE v.memory_id = m.id AND m.tenant_id = %s", (tenant_id,))
    conn.execute("ANALYZE memory")
    conn.execute("ANALYZE memory_version")


def terms(conn: psycopg.Connection[Any], tenant_id: uuid.UUID | str, subject: str,
          query: str) -> list[str]:
    """A query's terms as recall sends them: hashed under the subject's key."""
    tenant = uuid.UUID(str(tenant_id))
    return search_terms.query_terms(conn, tenant_id=tenant,
                                    subject=digests.subject_digest(tenant, subject), query=query)
