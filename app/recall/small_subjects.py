"""A small subject, read whole while its query embeds and ranked here.

Up to `RANK_IN_PROCESS_UP_TO` live memories, recall reads every one of the subject's current
versions (its vector, and which of the query's terms it holds) in the transaction that runs
while the query embeds, and computes both candidate lists in this process: the vector list
once the vector is there, the keyword list at once. No database statement is left on the
critical path but the result load, and the database is spared the keyword statement, whose
CPU slowed the embedding it runs beside on a small machine (docs/decisions.md, "Small
subjects are ranked where the query vector lands").

Both lists are the ones the database computes for larger subjects (`candidates`), to the
order: `tests/recall/test_small_subjects.py` holds them side by side.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import psycopg

from app.recall import candidates

# Up to this many live memories a subject is read whole while its query embeds. 500 vectors
# are 0.8 MB.
RANK_IN_PROCESS_UP_TO = 500

# The subject's live memories with their current vector (pgvector's binary form) and the
# query's terms each holds (the version's lexemes less those outside the query; the same
# exact-lexeme match as the keyword statement's), beside the query's terms themselves. Only
# if the subject has at most `most` live memories: otherwise no rows, read no further than
# one past that. One statement, one snapshot: what it returns is the whole subject.
_ROWS_SQL = """
    WITH query AS MATERIALIZED (
        SELECT coalesce(array_agg(DISTINCT lexeme), '{}'::text[]) AS terms
        FROM unnest(tsvector_to_array(to_tsvector('english', %(query)s))) AS lexeme
    )
    SELECT m.id, vector_send(v.embedding), q.terms,
           tsvector_to_array(ts_delete(v.search, tsvector_to_array(ts_delete(v.search, q.terms))))
    FROM memory_version v
    JOIN memory m ON m.current_version_id = v.id
    CROSS JOIN query q
    WHERE m.subject = %(subject)s AND m.state = ANY(%(states)s)
      AND (SELECT count(*) FROM (
               SELECT FROM memory s WHERE s.subject = %(subject)s AND s.state = ANY(%(states)s)
               LIMIT %(most)s + 1) up_to) <= %(most)s
"""


@dataclass(frozen=True)
class SubjectRows:
    """A small subject's live memories, read beforehand."""

    ids: list[uuid.UUID]  # every live memory
    matched: list[frozenset[str]]  # per memory, as `ids`: the query's terms it holds
    terms: frozenset[str]  # the query's distinct terms
    vector_ids: list[uuid.UUID]  # the memories with a vector
    matrix: np.ndarray[Any, np.dtype[np.float64]]  # their vectors, one row each

    def nearest(self, embedding: Sequence[float], n: int) -> list[tuple[uuid.UUID, float]]:
        """`candidates._EXACT_VECTOR_SQL`'s answer: the ``n`` smallest cosine distances, ties
        by ID (a zero vector's distance is NaN, which PostgreSQL sorts after every number)."""
        if not self.vector_ids:
            return []
        query = np.asarray(embedding, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            distances = 1.0 - (self.matrix @ query) / (
                np.linalg.norm(self.matrix, axis=1) * np.linalg.norm(query))
        ranked = sorted(zip(np.nan_to_num(distances, nan=np.inf).tolist(), self.vector_ids,
                            distances.tolist(), strict=True))
        return [(memory_id, distance) for _, memory_id, distance in ranked[:n]]

    def keyword(self, n: int, *, min_coverage: float = candidates.KEYWORD_MIN_COVERAGE,
                max_df_share: float = candidates.KEYWORD_MAX_DF_SHARE,
                ) -> list[tuple[uuid.UUID, float]]:
        """`candidates._KEYWORD_SQL`'s answer: each memory's IDF-weighted share of the query's
        terms, IDF over the subject's live memories, terms in more than ``max_df_share`` of
        them left out as stop words; those at ``min_coverage`` or more, best first, ties by
        ID."""
        total = len(self.ids)
        most = max(2, math.ceil(Fraction(str(max_df_share)) * total))
        frequency = Counter(term for held in self.matched for term in held)
        weight = {term: math.log(1 + (total - frequency[term] + 0.5) / (frequency[term] + 0.5))
                  for term in self.terms if frequency[term] <= most}
        # Summed in one order, exactly rounded: memories holding the same terms tie exactly,
        # as they do in the database's arithmetic, and fall back on their IDs.
        whole = math.fsum(weight[term] for term in sorted(weight))
        scored = []
        for memory_id, held in zip(self.ids, self.matched, strict=True):
            kept = sorted(term for term in held if term in weight)
            if kept:
                coverage = math.fsum(weight[term] for term in kept) / whole
                if coverage >= min_coverage:
                    scored.append((memory_id, coverage))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:n]


@dataclass(frozen=True)
class PendingRows:
    cursor: psycopg.Cursor[Any]

    def result(self) -> SubjectRows | None:
        """The subject's rows, or None if it has none or more than the limit (its lists then
        come from the database)."""
        rows = self.cursor.fetchall()
        if not rows:
            return None
        with_vector = [row for row in rows if row[1] is not None]
        if with_vector:
            # vector_send: int16 dimensions, int16 unused, then each value as a big-endian
            # float4.
            dimensions = int.from_bytes(with_vector[0][1][:2], "big")
            matrix = np.frombuffer(b"".join(bytes(row[1][4:]) for row in with_vector),
                                   dtype=">f4").reshape(len(with_vector), dimensions)
        else:
            matrix = np.zeros((0, 0))
        return SubjectRows(
            ids=[row[0] for row in rows],
            matched=[frozenset(row[3]) for row in rows],
            terms=frozenset(rows[0][2]),
            vector_ids=[row[0] for row in with_vector],
            matrix=matrix.astype(np.float64))


def send(conn: psycopg.Connection[Any], *, subject: str, states: Sequence[str],
         query: str) -> PendingRows:
    return PendingRows(conn.execute(_ROWS_SQL, {
        "subject": subject, "states": list(states), "query": query,
        "most": RANK_IN_PROCESS_UP_TO}, binary=True))
