"""A small subject, read whole while its query embeds and ranked here.

Up to `RANK_IN_PROCESS_UP_TO` live memories, recall reads every one of the subject's current
versions (its vector, and which of the query's terms it holds) in the transaction that runs
while the query embeds, and computes both candidate lists in this process: the vector list
once the vector is there, the keyword list at once. No database statement is left on the
critical path but the result load, and the database is spared the keyword statement, whose
CPU slowed the embedding it runs beside on a small machine (docs/decisions.md, "Small
subjects are ranked where the query vector lands").

Both lists are the ones the database computes for larger subjects (`candidates`,
`bm25_lists`): `tests/recall/test_small_subjects.py` holds them side by side.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import psycopg

from app.core.models import utcnow
from app.memories.store import LIVE
from app.text import bm25

# Up to this many live memories a subject is read whole while its query embeds. 500 vectors
# are 0.8 MB.
RANK_IN_PROCESS_UP_TO = 500

# Which of the query's terms (`q.terms`) a version `v` holds, and how often: `held` (the
# hashed lexemes `lethe_bm25` matches; NULL, not an empty array, for a version that holds
# none, which is most: no Python object per row for them).
HELD_TERMS = """
    CROSS JOIN LATERAL (
        SELECT array_agg(u.lexeme) AS terms,
               array_agg(coalesce(cardinality(u.positions), 1)) AS frequencies
        FROM unnest(v.search) u WHERE u.lexeme = ANY(q.terms)
    ) held
"""
# The subject's live memories with their current vector (pgvector's binary form), whether each
# is in the asked-for states and unexpired, its length in terms and how often it holds each of
# the query's terms (`held`). BM25's statistics are over every live memory, as the database's
# are (migration 0021), whichever states are asked for. Only if the subject has at most `most`
# live memories: otherwise no rows, read no further than one past that. One statement, one
# snapshot: what it returns is the whole subject.
_ROWS_SQL = f"""
    WITH query AS MATERIALIZED (SELECT %(terms)s::text[] AS terms)
    SELECT m.id, vector_send(v.embedding), held.terms, held.frequencies,
           lethe_text_length(v.search),
           m.state = ANY(%(states)s) AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
    FROM memory_version v
    JOIN memory m ON m.current_version_id = v.id
    CROSS JOIN query q
    {HELD_TERMS}
    WHERE m.subject = %(subject)s AND m.state = ANY(%(live)s)
      AND (SELECT count(*) FROM (
               SELECT FROM memory s WHERE s.subject = %(subject)s AND s.state = ANY(%(live)s)
               LIMIT %(most)s + 1) up_to) <= %(most)s
"""


@dataclass(frozen=True)
class SubjectRows:
    """A small subject's live memories, read beforehand."""

    ids: list[uuid.UUID]  # every live memory
    documents: list[bm25.Document]  # per memory, as `ids`: length, query terms' frequencies
    eligible: list[bool]  # per memory, as `ids`: in the asked-for states
    terms: frozenset[str]  # the query's distinct terms
    vector_ids: list[uuid.UUID]  # the eligible memories with a vector
    # Their vectors, one row each, at their stored precision: a recall holds them while its
    # query embeds, and the requests in flight at once, each holding its subject's, are what
    # the API's memory grows with (docs/benchmarks.md, "Load and soak").
    matrix: np.ndarray[Any, np.dtype[np.float32]]

    def nearest(self, embedding: Sequence[float], n: int) -> list[tuple[uuid.UUID, float]]:
        """`candidates._EXACT_VECTOR_SQL`'s answer: the ``n`` smallest cosine distances, ties
        by ID (a zero vector's distance is NaN, which PostgreSQL sorts after every number)."""
        if not self.vector_ids:
            return []
        query = np.asarray(embedding, dtype=np.float64)
        matrix = self.matrix.astype(np.float64)  # only while ranking
        with np.errstate(invalid="ignore", divide="ignore"):
            distances = 1.0 - (matrix @ query) / (
                np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
        ranked = sorted(zip(np.nan_to_num(distances, nan=np.inf).tolist(), self.vector_ids,
                            distances.tolist(), strict=True))
        return [(memory_id, distance) for _, memory_id, distance in ranked[:n]]

    def keyword(self, n: int) -> list[tuple[uuid.UUID, float]]:
        """`lethe_bm25`'s answer: the ``n`` eligible memories with the highest BM25 scores for
        the query's terms, statistics over every live memory, ties by ID."""
        scored = [(self.ids[index], score) for index, score in
                  bm25.rank(self.documents, self.terms, eligible=self.eligible)]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:n]


# The frequencies of a memory holding none of the query's terms: one mapping shared by all.
NO_TERMS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class PendingRows:
    cursor: psycopg.Cursor[Any]
    terms: frozenset[str]  # the query's distinct terms, hashed

    def result(self) -> SubjectRows | None:
        """The subject's rows, or None if it has none or more than the limit (its lists then
        come from the database)."""
        rows = self.cursor.fetchall()
        if not rows:
            return None
        with_vector = [row for row in rows if row[1] is not None and row[5]]
        if with_vector:
            # vector_send: int16 dimensions, int16 unused, then each value as a big-endian
            # float4. Joined through views: sliced copies were a second copy of the subject's
            # vectors in small blocks of the heap, in each of the requests worked on at once.
            dimensions = int.from_bytes(with_vector[0][1][:2], "big")
            matrix = np.frombuffer(b"".join(memoryview(row[1])[4:] for row in with_vector),
                                   dtype=">f4").reshape(len(with_vector), dimensions)
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        return SubjectRows(
            ids=[row[0] for row in rows],
            documents=[bm25.Document(length=int(row[4]), frequencies=NO_TERMS if row[2] is None
                                     else dict(zip(row[2], row[3], strict=True)))
                       for row in rows],
            eligible=[bool(row[5]) for row in rows],
            terms=self.terms,
            vector_ids=[row[0] for row in with_vector],
            matrix=matrix.astype(np.float32))


def send(conn: psycopg.Connection[Any], *, subject: str, states: Sequence[str],
         terms: Sequence[str]) -> PendingRows:
    """Send the read; ``terms``: the query's distinct terms, hashed (`search_terms`)."""
    return PendingRows(conn.execute(_ROWS_SQL, {
        "subject": subject, "states": list(states), "live": LIVE, "terms": list(terms),
        "most": RANK_IN_PROCESS_UP_TO, "now": utcnow()}, binary=True), frozenset(terms))
