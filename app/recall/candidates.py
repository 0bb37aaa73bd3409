"""The two candidate generators of hybrid recall, each one SQL statement.

Both read current versions only (one pointer join, `memory.current_version_id`) of live
memories of one subject, straight from the database: no cache can serve a stale view.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import text
from sqlmodel import Session

# Iterative index scans: when the subject filter discards most HNSW neighbours, pgvector keeps
# scanning instead of returning fewer than `limit` rows. relaxed_order is re-sorted below.
_VECTOR_SQL = text(
    """
    WITH nearest AS MATERIALIZED (
        SELECT m.id, v.embedding <=> CAST(:embedding AS vector) AS distance
        FROM memory_version v
        JOIN memory m ON m.current_version_id = v.id
        WHERE m.subject = :subject AND m.state = ANY(:states) AND v.embedding IS NOT NULL
        ORDER BY v.embedding <=> CAST(:embedding AS vector)
        LIMIT :n
    )
    SELECT id, distance FROM nearest ORDER BY distance, id
    """
)

# Keyword relevance = the IDF-weighted share of the query's terms a memory contains, with IDF
# over the subject's live memories (PostgreSQL's ts_rank has none, so "work" would weigh as much
# as "ZX-400"). Terms absent from the subject count fully in the denominator, so a paraphrase
# that shares one common word with a memory scores low and stays out, and so does a term many
# of the subject's memories contain: keyword evidence joins the fusion only when it is real.
# Query lexemes are stemmed already, so they are matched with the 'simple' configuration.
_KEYWORD_SQL = text(
    """
    WITH terms AS (
        SELECT DISTINCT to_tsquery('simple', quote_literal(lexeme)) AS term
        FROM unnest(tsvector_to_array(to_tsvector('english', :query))) AS lexeme
    ),
    total AS (
        SELECT count(*) AS n FROM memory m
        WHERE m.subject = :subject AND m.state = ANY(:states)
    ),
    -- The planner may answer each term from the GIN index on `search` (a rare term) or from
    -- the subject's rows (a small subject); both give the same matches.
    matches AS (
        SELECT t.term, m.id
        FROM terms t
        JOIN memory_version v ON v.search @@ t.term
        JOIN memory m ON m.current_version_id = v.id
        WHERE m.subject = :subject AND m.state = ANY(:states)
    ),
    weights AS (
        SELECT t.term, count(matches.id) AS df,
               ln(1 + (total.n - count(matches.id) + 0.5) / (count(matches.id) + 0.5)) AS idf
        FROM terms t CROSS JOIN total LEFT JOIN matches ON matches.term = t.term
        GROUP BY t.term, total.n
    ),
    scored AS (
        SELECT matches.id,
               sum(weights.idf) / (SELECT sum(idf) FROM weights) AS coverage
        FROM matches JOIN weights USING (term)
        -- Only specific terms testify: one found in many of the subject's memories ("live")
        -- says nothing about which of them is meant.
        WHERE weights.df <= greatest(2, ceil((SELECT n FROM total) * :max_df_share))
        GROUP BY matches.id
    )
    SELECT id, coverage FROM scored
    WHERE coverage >= :min_coverage
    ORDER BY coverage DESC, id
    LIMIT :n
    """
)

KEYWORD_MIN_COVERAGE = 0.5
KEYWORD_MAX_DF_SHARE = 0.05


def vector_literal(embedding: Sequence[float]) -> str:
    return "[" + ",".join(f"{value:.7g}" for value in embedding) + "]"


def use_iterative_scan(session: Session, *, n: int) -> None:
    """Let this transaction's HNSW scans keep going past rows a filter drops (up to ``n``)."""
    session.execute(
        text("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
             "set_config('hnsw.ef_search', :ef, true)"),
        {"ef": str(max(40, min(n * 2, 1000)))},
    )


def by_vector(
    session: Session, *, subject: str, states: Sequence[str], embedding: Sequence[float], n: int
) -> list[tuple[uuid.UUID, float]]:
    use_iterative_scan(session, n=n)
    rows = session.execute(
        _VECTOR_SQL,
        {"embedding": vector_literal(embedding), "subject": subject, "states": list(states),
         "n": n},
    ).all()
    return [(row[0], float(row[1])) for row in rows]


def by_keywords(
    session: Session,
    *,
    subject: str,
    states: Sequence[str],
    query: str,
    n: int,
    min_coverage: float = KEYWORD_MIN_COVERAGE,
) -> list[tuple[uuid.UUID, float]]:
    rows = session.execute(
        _KEYWORD_SQL,
        {"query": query, "subject": subject, "states": list(states), "n": n,
         "min_coverage": min_coverage, "max_df_share": KEYWORD_MAX_DF_SHARE},
    ).all()
    return [(row[0], float(row[1])) for row in rows]
