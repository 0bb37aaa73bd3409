"""The two candidate generators of hybrid recall: nearest vectors and keyword matches.

Both read current versions only (one pointer join, `memory.current_version_id`) of live
memories of one subject, straight from the database: no cache can serve a stale view. The
vector list is exact, except recall's for a subject too large to sort in time (`EXACT_UP_TO`).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
from sqlmodel import Session

from app.core import db
from app.core.models import utcnow
from app.memories.models import EMBEDDING_DIMENSIONS, ROUTED_VECTOR
from app.memories.store import vector_literal

# A recall asks for one list or both; in pipeline mode both statements travel together (one
# round trip) and each is planned on its own (cheaper than one statement holding both).
# Fusion happens in Python (ranking.py).

# The current versions of one subject's live memories with their cosine distance to the query.
_DISTANCE = "v.embedding <=> CAST(%(embedding)s AS vector)"
_SUBJECT_ROWS = """
    FROM memory_version v
    JOIN memory m ON m.current_version_id = v.id
    WHERE m.subject = %(subject)s AND m.state = ANY(%(states)s) AND v.embedding IS NOT NULL
      AND (m.expires_at IS NULL OR m.expires_at > %(now)s)
"""
_SUBJECT_VECTORS = f"SELECT m.id, {_DISTANCE} AS distance {_SUBJECT_ROWS}"

# Recall's list for a subject too large to sort in time (`SubjectSize.walks`) while there is
# no lists index (below): a walk of the HNSW index (docs/decisions.md, "Large subjects walk an
# index"). The index holds each vector beside a code of its subject (migration 0014), and the
# query is routed the same way, so the walk starts among the subject's versions and the L2
# order it follows is, within the subject, the cosine order. Iterative index scans keep the
# walk going while the subject filter drops what it finds, so `n` rows come back;
# relaxed_order is re-sorted here. Always sent unprepared, so it is planned for its own
# subject: a generic plan is made for a subject of average size, and for one that size the
# planner sorts instead of walking.
_ROUTED_DISTANCE = " <-> ".join([
    ROUTED_VECTOR.format(embedding="v.embedding", route="v.route"),
    ROUTED_VECTOR.format(embedding="CAST(%(embedding)s AS vector)",
                         route="lethe_subject_route(lethe_current_tenant(), %(subject)s)")])
_WALK_VECTOR_SQL = f"""
    SELECT id, distance FROM ({_SUBJECT_VECTORS}
        ORDER BY {_ROUTED_DISTANCE}
        LIMIT %(n)s
    ) walked
    ORDER BY distance, id
"""

# A large subject's list where the IVFFlat index exists (app/recall/vector_lists.py): the
# same walk over the index of half-precision vectors, which probes the `ivfflat.probes` lists
# whose centroids are nearest the query, then more while the subject filter drops rows. It
# reads whole lists, so it does not lose its way between clusters of similar memories as a
# walk of the HNSW graph can (docs/decisions.md, "The walk is of an IVFFlat index").
# The centroids describe the table when the index was built. A memory changed since (from
# `since`, a little before the build) may say something none of them is near, and be filed
# under a list no query near it probes (on the benchmark, five thousand memories of new
# topics: recall@10 0.8 for questions on them), so those memories are sorted exactly beside
# the walk, and the two re-sorted as one. How many there are is bounded by rebuilding the
# index on churn (`vector_lists.CHURN_SHARE`).
HALF_VECTOR = f"halfvec({EMBEDDING_DIMENSIONS})"
_LISTS_WALK_SQL = f"""
    WITH changed AS MATERIALIZED ({_SUBJECT_VECTORS} AND m.updated_at >= %(since)s)
    SELECT id, distance FROM (
        (SELECT id, distance FROM ({_SUBJECT_VECTORS}
            ORDER BY v.embedding::{HALF_VECTOR} <=> CAST(%(embedding)s AS {HALF_VECTOR})
            LIMIT %(n)s) walked)
        UNION
        (SELECT id, distance FROM changed ORDER BY distance, id LIMIT %(n)s)
    ) found
    ORDER BY distance, id
    LIMIT %(n)s
"""

# A build's time as its record in the index's comment gives it (app/recall/vector_lists.py):
# seconds since the epoch, read by a pattern that matches digits only, so a comment written
# by hand can never make the cast fail. NULL for an index without one.
_BUILT_AT = ("""to_timestamp(substring(obj_description(c.oid, 'pg_class')"""
             """ from '"built_at": ([0-9]+(?:[.][0-9]+)?)')::float8)""")
# Memories changed this long before the build are sorted beside the walk too: their version
# may have committed after the build's k-means took its sample, or been stamped by an API
# server whose clock runs a little behind the database's.
SINCE_MARGIN = "1 minute"

# The valid IVFFlat index on the versions that has a record of its build, found by access
# method, not name: while one replaces another, either serves, and the older build's time is
# the one that bounds what both describe. No row while there is none.
LISTS_SQL = f"""
    SELECT lists, since FROM (
        SELECT o.option_value::int AS lists, {_BUILT_AT} - interval '{SINCE_MARGIN}' AS since
        FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_am a ON a.oid = c.relam
        CROSS JOIN LATERAL pg_options_to_table(c.reloptions) o
        WHERE i.indrelid = 'memory_version'::regclass AND i.indisvalid AND i.indisready
          AND a.amname = 'ivfflat' AND o.option_name = 'lists'
    ) lists_indexes
    WHERE since IS NOT NULL
    ORDER BY since
    LIMIT 1
"""

# How many live memories the subject has, beside how many versions the index holds and the
# lists index's lists and `since`.
_SIZE_SQL = f"""
    SELECT (SELECT count(*) FROM memory m
            WHERE m.subject = %(subject)s AND m.state = ANY(%(states)s)),
           (SELECT reltuples FROM pg_class WHERE oid = 'memory_version'::regclass),
           lists_index.lists, lists_index.since
    FROM (SELECT 1) one LEFT JOIN ({LISTS_SQL}) lists_index ON true
"""

# The exact list: every row of the subject, gathered first (a materialized CTE the planner
# cannot feed from an index ordered by distance), then sorted. Recall's for all but the
# largest subjects, and forgetting's always: a forget request must not miss a memory because
# an approximate walk did. Its plan is the same for every subject, so a prepared one serves.
_EXACT_VECTOR_SQL = f"""
    WITH subject_rows AS MATERIALIZED ({_SUBJECT_VECTORS})
    SELECT id, distance FROM subject_rows ORDER BY distance, id LIMIT %(n)s
"""

# Keyword relevance = the IDF-weighted share of the query's terms a memory contains, with IDF
# over the subject's live memories (PostgreSQL's ts_rank has none, so "work" would weigh as much
# as "ZX-400"). Terms absent from the subject count fully in the denominator, so a paraphrase
# that shares one word with a memory scores low and stays out. A term in more than
# `KEYWORD_MAX_DF_SHARE` of the subject's memories ("live") says nothing about which of them is
# meant: it is a stop word here, neither testifying nor weighing against the others, and its
# matches are read only far enough to know it is that common (`lethe_keyword_matches` stops
# at `most + 1`; migration 0011). Keyword evidence joins the fusion only when it is real.
# Query terms are hashed lexemes (`search_terms`), so each is matched as it is: one term, quoted in
# tsquery syntax (quotes and backslashes doubled), not parsed again. Parsed again, a lexeme
# such as `co-found` or a URL became a phrase of its parts that no memory matched.
_KEYWORD_SQL = """
    WITH terms AS (
        SELECT DISTINCT (
            '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''''
        )::tsquery AS term
        FROM unnest(%(terms)s::text[]) AS lexeme
    ),
    -- The subject's live memories: counted here unless the caller has counted them in this
    -- transaction already (`live`; ≈ 4 ms at 50,000), in which case the planner drops the count.
    total AS (
        SELECT n, greatest(2, ceil(n * %(max_df_share)s))::int AS most
        FROM (SELECT coalesce(%(live)s::bigint, (
                  SELECT count(*) FROM memory m
                  WHERE m.subject = %(subject)s AND m.state = ANY(%(states)s))) AS n) counted
    ),
    -- The (term, memory) pairs come from `lethe_keyword_matches` (migrations 0010, 0011),
    -- which runs with its owner's rights and applies the tenant itself. When the owner
    -- bypasses row-level security the planner may answer a rare term from the GIN index on
    -- `search`; under the policy it may not (`@@` is not leakproof), so with an owner bound
    -- by it rows are tested one by one. Materialized: read twice below, run once.
    matches AS MATERIALIZED (
        SELECT k.term, k.memory_id AS id
        FROM lethe_keyword_matches(%(subject)s, %(states)s, ARRAY(SELECT term FROM terms),
                                   (SELECT most + 1 FROM total)) k
    ),
    weights AS (
        SELECT t.term,
               ln(1 + (total.n - count(matches.id) + 0.5) / (count(matches.id) + 0.5)) AS idf
        FROM terms t CROSS JOIN total LEFT JOIN matches ON matches.term = t.term
        GROUP BY t.term, total.n, total.most
        HAVING count(matches.id) <= total.most
    ),
    scored AS (
        SELECT matches.id,
               sum(weights.idf) / (SELECT sum(idf) FROM weights) AS coverage
        FROM matches JOIN weights USING (term)
        GROUP BY matches.id
    )
    SELECT id, coverage FROM scored
    WHERE coverage >= %(min_coverage)s
    ORDER BY coverage DESC, id
    LIMIT %(n)s
"""


KEYWORD_MIN_COVERAGE = 0.5
# Before every expiry: the instant at which no memory has expired.
EVER = datetime(1, 1, 1, tzinfo=UTC)
KEYWORD_MAX_DF_SHARE = 0.05


# Sorting a subject's rows exactly costs ≈ 2 µs a row on the benchmark machine (≈ 23 ms at
# 10,000), leaving room in the 100 ms recall target for the keyword list, which may read the
# same rows. Beyond it the walk is ≈ 4× faster but approximate (docs/benchmarks.md,
# "Recall and writes").
EXACT_UP_TO = 20_000
# The widest walk pgvector allows: the walk is for large subjects only, and the wider it is,
# the more of the exact nearest it finds.
EF_SEARCH = 1000


# How many of the subject's vectors a walk of the lists index reads, whatever the subject's
# share of the index: it probes the lists whose centroids are nearest the query, as many as
# hold about this many of them (at least pgvector's advice, the square root of the lists).
# On the benchmark, over five builds of the index, reading ≈ 16,000 found the exact top ten
# of a subject of 50,000 (32 lists of 100) and of one of 30,000 (54) for every query; reading
# half as many missed up to 8 % of them in some builds (docs/benchmarks.md).
WALK_READS = 16_000
# A version read by a lists walk costs about a third of a row of the exact sort (a
# half-precision distance in an index page, against a join to the version's heap row: on the
# benchmark machine ≈ 0.45 µs, 32,000 versions in 14 ms, against ≈ 1.5 µs, 50,000 rows in 75).
LISTS_ROW_COST = 1 / 3


def probes(lists: int, memories: int) -> int:
    """Lists a walk of the lists index probes for a subject of ``memories``."""
    wanted = max(math.ceil(math.sqrt(lists)), math.ceil(WALK_READS * lists / max(1, memories)))
    return min(lists, wanted)


def walk_settings() -> dict[str, str]:
    """Transaction settings for a walk: index scans go on past rows the subject filter drops,
    and an HNSW walk is as wide as `EF_SEARCH` (a lists walk's probes are set by `send`)."""
    return {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": str(EF_SEARCH),
            "ivfflat.iterative_scan": "relaxed_order"}


def scan_settings() -> dict[str, str]:
    """`walk_settings`, and every statement planned for its own subject, for a transaction
    that reads the keyword list. psycopg prepares a statement run five times on a connection,
    and PostgreSQL then keeps one generic plan, made for a subject of average size, if it
    looks no dearer: for a subject of 50,000 memories the keyword list was then planned as
    for a hundred (59 → 111 ms). Planning each time costs ≈ 0.4 ms a recall."""
    return {**walk_settings(), "plan_cache_mode": "force_custom_plan"}


@dataclass(frozen=True)
class ListsIndex:
    """The lists index a walk reads: its lists, and the time from which changed memories
    are sorted beside its walk."""

    lists: int
    since: datetime


@dataclass(frozen=True)
class SubjectSize:
    """A subject's live memories, the index's versions (PostgreSQL's estimate) and the lists
    index, if there is one."""

    memories: int
    versions: float
    lists_index: ListsIndex | None = None

    def walks(self) -> bool:
        """Whether recall walks an index for this subject's nearest, rather than sort its
        rows: past `EXACT_UP_TO` memories, and then the lists index if the walk reads less
        than the sort would (a subject that is a small share of the index needs many lists
        probed), else the HNSW index, which holds each subject's versions together whatever
        its share of the index (migration 0014)."""
        if self.memories <= EXACT_UP_TO:
            return False
        if self.lists_index is not None:
            # The walk reads every version in the lists it probes (about equally full).
            lists = self.lists_index.lists
            reads = probes(lists, self.memories) * self.versions / lists
            return reads * LISTS_ROW_COST < self.memories
        return True


@dataclass(frozen=True)
class PendingSize:
    cursor: psycopg.Cursor[Any]

    def result(self) -> SubjectSize:
        row = self.cursor.fetchone()
        assert row is not None, "a count always answers"
        lists_index = None if row[2] is None else ListsIndex(lists=int(row[2]), since=row[3])
        return SubjectSize(memories=int(row[0]), versions=float(row[1]), lists_index=lists_index)


def send_size(conn: psycopg.Connection[Any], *, subject: str,
              states: Sequence[str]) -> PendingSize:
    return PendingSize(conn.execute(_SIZE_SQL, {"subject": subject, "states": list(states)}))


@dataclass(frozen=True)
class Lists:
    """Each generator's candidates, best first, as (memory ID, score); None when not asked."""

    vector: list[tuple[uuid.UUID, float]] | None
    keyword: list[tuple[uuid.UUID, float]] | None

    def ranked(self) -> list[list[uuid.UUID]]:
        """The asked-for lists as IDs, vector first (fusion keeps first-seen order on ties)."""
        return [[memory_id for memory_id, _ in found]
                for found in (self.vector, self.keyword) if found is not None]


@dataclass(frozen=True)
class PendingLists:
    """Lists sent to the database; in pipeline mode their answers are awaited by `result()`."""

    vector: psycopg.Cursor[Any] | None
    keyword: psycopg.Cursor[Any] | None

    def result(self) -> Lists:
        return Lists(*[
            None if cursor is None else [(row[0], float(row[1])) for row in cursor.fetchall()]
            for cursor in (self.vector, self.keyword)
        ])


# A query vector, or one still being computed (`embeddings.runtime.embed_soon`).
Embedding = Sequence[float] | Future[list[float]]


def send(
    conn: psycopg.Connection[Any],
    *,
    subject: str,
    states: Sequence[str],
    n: int,
    embedding: Sequence[float] | None = None,
    terms: Sequence[str] | None = None,
    min_coverage: float = KEYWORD_MIN_COVERAGE,
    exact: bool = False,
    size: SubjectSize | None = None,
    now: datetime | None = None,
    expired_too: bool = False,
) -> PendingLists:
    """Send the vector list (given ``embedding``) and the keyword list (given ``terms``, the
    query's hashed terms: `search_terms.query_terms`).

    The vector list sorts the subject's rows, or walks an index if ``size`` says so (the
    lists index if there is one, else the HNSW index; a walk needs `walk_settings` in force);
    never with ``exact``. Without ``size`` the subject is counted first, which costs a round
    trip. Given ``size``, the keyword list takes the subject's count from it. A memory that
    had expired by ``now`` (default: the clock's now) is left out, unless ``expired_too``."""
    assert embedding is not None or terms is not None, "ask for at least one list"
    # An expired memory is no longer recalled; forgetting still finds it (``expired_too``).
    common = {"subject": subject, "states": list(states), "n": n,
              "now": EVER if expired_too else now or utcnow()}
    vector = None
    if embedding is not None:
        if not exact and size is None:
            size = send_size(conn, subject=subject, states=states).result()
        ask = {**common, "embedding": vector_literal(embedding)}
        if exact or size is None or not size.walks():
            vector = conn.execute(_EXACT_VECTOR_SQL, ask)
        elif size.lists_index is not None:
            # In a pipeline this setting travels with the walk: no round trip of its own.
            conn.execute("SELECT set_config('ivfflat.probes', %s, true)",
                         (str(probes(size.lists_index.lists, size.memories)),))
            vector = conn.execute(_LISTS_WALK_SQL, {**ask, "since": size.lists_index.since},
                                  prepare=False)
        else:
            vector = conn.execute(_WALK_VECTOR_SQL, ask, prepare=False)
    return PendingLists(
        vector=vector,
        keyword=None if terms is None else conn.execute(_KEYWORD_SQL, {
            **common, "terms": list(terms), "min_coverage": min_coverage,
            "max_df_share": KEYWORD_MAX_DF_SHARE,
            "live": None if size is None else size.memories}),
    )


def lists(session: Session, **ask: Any) -> Lists:
    """`send` and await the lists inside an ORM transaction (same arguments)."""
    return send(db.driver_connection(session), **ask).result()
