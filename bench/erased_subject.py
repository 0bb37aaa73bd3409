"""Seed a subject to erase, in a few set-based statements: its memories with several versions
each, memories of other subjects derived from them, artifacts derived from them, and
background memories of other subjects. Used by `bench/erasure_bench.py` and the erasure
worker test; texts carry a marker word so a scan can tell them apart.

The rows are written as the database owner with the tenant named (row-level security is
forced), like the API would leave them, minus embeddings: an erasure never reads those.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from app.keys import digests
from app.memories import sealing, search_terms
from bench import sealed


@dataclass(frozen=True)
class Seeded:
    subject: str
    memories: int
    versions: int  # of the subject's memories
    derived: int
    artifacts: int
    background: int


_MEMORIES = """
INSERT INTO memory (id, tenant_id, subject, volatility, state, revision, source)
SELECT gen_random_uuid(), %(tenant)s, %(subject)s || CASE WHEN %(spread)s
       THEN ':' || (n %% 100) ELSE '' END, 'preferential', 'active', 1,
       CASE WHEN %(sourced)s THEN 'chat:' || %(subject)s || ':' || (n %% 10) END
FROM generate_series(1, %(count)s) AS n
RETURNING id
"""
# The versions' texts, then the versions sealed and hashed as the store writes them.
_TEXTS = """
SELECT gen_random_uuid(), m.id, m.subject, s,
       %(word)s || ' fact ' || left(m.id::text, 8) || ' version ' || s
FROM memory m CROSS JOIN generate_series(1, %(versions)s) AS s
WHERE m.tenant_id = %(tenant)s AND m.id = ANY(%(ids)s)
"""
_VERSIONS = """
INSERT INTO memory_version (id, tenant_id, memory_id, seq, sealed_text, search)
SELECT v.id, %(tenant)s, v.memory_id, v.seq, v.sealed, v.search::tsvector
FROM unnest(%(version_ids)s::uuid[], %(memory_ids)s::uuid[], %(seqs)s::int[],
            %(sealed)s::bytea[], %(searches)s::text[]) AS v(id, memory_id, seq, sealed, search)
"""
_CURRENT = """
UPDATE memory m SET current_version_id = v.id, revision = v.seq
FROM memory_version v
WHERE m.tenant_id = %(tenant)s AND m.id = ANY(%(ids)s) AND v.memory_id = m.id
  AND v.seq = %(versions)s
"""
_EDGES = """
INSERT INTO provenance_edge (id, tenant_id, child_kind, child_id, parent_kind, parent_ref)
SELECT gen_random_uuid(), %(tenant)s, %(kind)s, c.id, 'memory', p.id::text
FROM unnest(%(children)s::uuid[]) WITH ORDINALITY AS c(id, n)
JOIN unnest(%(parents)s::uuid[]) WITH ORDINALITY AS p(id, n) ON p.n = c.n
"""
_ARTIFACTS = """
INSERT INTO artifact (id, tenant_id, kind, ref, status)
SELECT gen_random_uuid(), %(tenant)s, 'summary', 'row:' || n, 'active'
FROM generate_series(1, %(count)s) AS n
RETURNING id
"""


def seed(conn: Any, *, tenant_id: uuid.UUID, subject: str, memories: int, versions: int = 1,
         derived: int = 0, artifacts: int = 0, background: int = 0,
         word: str = "Erasable") -> Seeded:
    """Write the rows in one transaction of ``conn`` (a psycopg connection of the owner)."""
    tenant = str(tenant_id)
    with conn.transaction():
        conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (tenant,))
        own = _memories(conn, tenant, subject, memories, versions, word, sourced=True)
        children = _memories(conn, tenant, "derived", derived, 1, word + "Derived",
                             spread=True)
        _edges(conn, tenant, "memory", children, own)
        made = [row[0] for row in conn.execute(_ARTIFACTS, {"tenant": tenant,
                                                            "count": artifacts})]
        _edges(conn, tenant, "artifact", made, own)
        _memories(conn, tenant, "background", background, 1, "Background", spread=True)
    return Seeded(subject=subject, memories=memories, versions=memories * versions,
                  derived=derived, artifacts=artifacts, background=background)


def _memories(conn: Any, tenant: str, subject: str, count: int, versions: int, word: str,
              *, spread: bool = False, sourced: bool = False) -> list[uuid.UUID]:
    if not count:
        return []
    ids = [row[0] for row in conn.execute(_MEMORIES, {
        "tenant": tenant, "subject": subject, "count": count, "spread": spread,
        "sourced": sourced})]
    _digest(conn, uuid.UUID(tenant), ids)
    params = {"tenant": tenant, "ids": ids, "versions": versions, "word": word}
    conn.execute(_VERSIONS, {"tenant": tenant, **_sealed(conn, uuid.UUID(tenant), list(
        conn.execute(_TEXTS, params)))})
    conn.execute(_CURRENT, params)
    return ids


def _digest(conn: Any, tenant_id: uuid.UUID, ids: list[uuid.UUID]) -> None:
    """The memories' subjects and sources as the store keeps them: digests, sealed copies."""
    rows = conn.execute("SELECT id, subject, source FROM memory WHERE id = ANY(%s)",
                        (ids,)).fetchall()
    columns: dict[str, list[Any]] = {name: [] for name in (
        "ids", "subjects", "sealed_subjects", "sources", "sealed_sources")}
    for memory_id, subject, source in rows:
        digest, sealed_subject = sealed.subject(tenant_id, memory_id, subject)
        for name, value in zip(columns, (
                memory_id, digest, sealed_subject, digests.optional_source(tenant_id, source),
                sealing.seal_source(tenant_id, digest, memory_id, source)), strict=True):
            columns[name].append(value)
    conn.execute(_DIGESTED, columns)


_DIGESTED = """
UPDATE memory m SET subject = u.subject, sealed_subject = u.sealed_subject,
       source = u.source, sealed_source = u.sealed_source
FROM unnest(%(ids)s::uuid[], %(subjects)s::text[], %(sealed_subjects)s::bytea[],
            %(sources)s::text[], %(sealed_sources)s::bytea[])
     AS u(id, subject, sealed_subject, source, sealed_source)
WHERE m.id = u.id
"""


def _sealed(conn: Any, tenant_id: uuid.UUID, rows: list[Any]) -> dict[str, list[Any]]:
    """The rows (version ID, memory ID, subject, seq, text) as `_VERSIONS` takes them."""
    columns: dict[str, list[Any]] = {name: [] for name in (
        "version_ids", "memory_ids", "seqs", "sealed", "searches")}
    terms = search_terms.lexemes(conn, [row[4] for row in rows])
    for (version_id, memory_id, subject, seq, text), lexemes in zip(rows, terms, strict=True):
        key = sealing.key_for_writing(tenant_id, subject)
        for name, value in zip(columns, (
                version_id, memory_id, seq, sealing.seal_text(tenant_id, subject, version_id, text),
                search_terms.document(key, lexemes)), strict=True):
            columns[name].append(value)
    return columns


def _edges(conn: Any, tenant: str, kind: str, children: list[uuid.UUID],
           parents: list[uuid.UUID]) -> None:
    """Child i derives from parent i (cycling through the parents)."""
    if children and parents:
        conn.execute(_EDGES, {"tenant": tenant, "kind": kind, "children": children,
                              "parents": [parents[i % len(parents)]
                                          for i in range(len(children))]})
