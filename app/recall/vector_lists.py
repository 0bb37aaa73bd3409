"""The IVFFlat ("lists") index that large subjects' recall walks, built once there is data.

An IVFFlat index files every vector under the nearest of `lists` centroids, which k-means
finds among the rows present when the index is built: built on an empty table, every vector
lands in one list and the walk scans them all. So no migration creates it. `ensure` builds it
once the table holds enough versions for any subject to be walked (`candidates.EXACT_UP_TO`),
and builds it again when the table has grown or shrunk so far that another number of lists
suits it, or when a tenth as many versions have been written since as it was built over.
Recall sorts the memories changed since a build beside the walk (`candidates._LISTS_WALK_SQL`),
so the rebuild on churn bounds that sort rather than repairs the walk. Beat runs
`ensure` (app/recall/tasks.py); building takes seconds for 100,000 versions and runs
CONCURRENTLY, so writes go on meanwhile.

The index is over the vectors cast to half precision (half the size; the walk re-sorts what
it finds by the full vector's distance), and that expression is also what keeps it apart
from the HNSW index over the same column (over its routed form, migration 0014): only a
statement ordered by the cast can use it.

Until the index exists recall walks the HNSW index instead (`candidates.SubjectSize.lists_index`);
while one replaces another, either serves.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from app.recall import candidates

log = logging.getLogger(__name__)

INDEX = "ix_memory_version_embedding_lists"
# Built under this name, then renamed over INDEX; a build that died leaves it invalid.
_NEXT = f"{INDEX}_next"
_DEFINITION = ("ON memory_version USING ivfflat"
               f" ((embedding::{candidates.HALF_VECTOR}) halfvec_cosine_ops)"
               " WITH (lists = {lists})")

# pgvector's advice: a list per 1,000 rows up to a million, the square root beyond.
ROWS_PER_LIST = 1_000
MIN_LISTS = 10
# Rebuilt when the number of lists the table calls for is this far from the index's.
REBUILD_FACTOR = 2.0
# Rebuilt when this share of the versions it was built over has been written since.
CHURN_SHARE = 0.1
# One builder at a time across the installation (beat ticks may overlap).
_LOCK_KEY = 0x4C45_5448_4500_0001

# Enough for k-means over pgvector's sample (50 rows a list) of a table of millions.
_BUILD_MEMORY = "512MB"


def include_object(_object: Any, name: str | None, type_: str, _reflected: bool,
                   _compare_to: Any) -> bool:
    """Alembic's filter: the lists index (and a build of it under way) belongs to `ensure`,
    not to the migrations, so autogenerate must not offer to drop it."""
    return not (type_ == "index" and name is not None and name.startswith(INDEX))


def definition(name: str, lists: int, *, concurrently: bool = False) -> sql.Composed:
    """The statement that builds the lists index under ``name``."""
    create = "CREATE INDEX CONCURRENTLY {} " if concurrently else "CREATE INDEX {} "
    return sql.SQL(create + _DEFINITION.format(lists=lists)).format(sql.Identifier(name))


def wanted_lists(versions: float) -> int:
    """The number of lists for a table of ``versions`` vectors."""
    if versions <= 1_000_000:
        return max(MIN_LISTS, int(versions // ROWS_PER_LIST))
    return int(math.sqrt(versions))


def min_versions() -> int:
    """Below this many versions no subject is large enough to be walked, so no index."""
    return candidates.EXACT_UP_TO


@dataclass(frozen=True)
class Built:
    lists: int
    versions: int
    replaced: int | None  # the lists of the index it replaced, if any
    # "new" (none that recall can use: no index, or none with a record of its build), "size"
    # (the table calls for other lists) or "churn" (see `churned`)
    reason: str


def current_lists(conn: psycopg.Connection[Any]) -> int | None:
    """The lists of the valid index recall would walk, or None if there is none."""
    row = conn.execute(candidates.LISTS_SQL).fetchone()
    return None if row is None else int(row[0])


def ensure(conn: psycopg.Connection[Any]) -> Built | None:
    """Build or rebuild the index if the table calls for it; None if it is fine as it is, or
    another builder is at it. ``conn``: the owner's (who may build indexes on the table), in
    autocommit mode (CREATE INDEX CONCURRENTLY runs outside a transaction)."""
    if not conn.autocommit:
        raise ValueError("ensure() needs a connection in autocommit mode")
    locked = conn.execute("SELECT pg_try_advisory_lock(%s)", (_LOCK_KEY,)).fetchone()
    if not locked or not locked[0]:
        log.info("another process is building the vector lists index; skipped")
        return None
    try:
        return _ensure(conn)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))


def _ensure(conn: psycopg.Connection[Any]) -> Built | None:
    _finish_swap(conn)
    versions = _versions(conn)
    have = current_lists(conn)
    if versions < min_versions():
        return None
    wanted = wanted_lists(versions)
    inserts = _inserts(conn)
    record = _recorded(conn)
    if have is None or record is None:
        reason = "new"
    elif not 1 / REBUILD_FACTOR < wanted / have < REBUILD_FACTOR:
        reason = "size"
    elif inserts < record["inserts"]:
        # The statistics were reset since the build: count from now.
        _record(conn, INDEX, {**record, "inserts": inserts})
        return None
    elif churned(record, inserts):
        reason = "churn"
    else:
        return None
    log.info("building the vector lists index (%s): %d lists over %d versions (was %s)",
             reason, wanted, versions, have)
    _drop(conn, _NEXT)  # a build that died (CONCURRENTLY leaves an invalid index behind)
    # Read before the build starts: what k-means samples is the table from then on.
    started = conn.execute("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone()
    assert started is not None
    conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(_BUILD_MEMORY)))
    try:
        conn.execute(definition(_NEXT, wanted, concurrently=True))
    finally:
        conn.execute("RESET maintenance_work_mem")
    # Recorded before the swap, so recall never sees the new index without its build time.
    _record(conn, _NEXT, {"versions": versions, "inserts": inserts, "built_at": started[0]})
    # Recall finds any valid lists index by its access method, not its name, so between
    # the two statements it walks the new one.
    _drop(conn, INDEX)
    conn.execute(sql.SQL("ALTER INDEX {} RENAME TO {}").format(
        sql.Identifier(_NEXT), sql.Identifier(INDEX)))
    conn.execute("ANALYZE memory_version")
    return Built(lists=wanted, versions=versions, replaced=have, reason=reason)


# The index's centroids describe the table it was built over; recall sorts what changed since
# beside the walk, so a table whose content turns over (memories forgotten and purged, new ones
# written) costs recall more the longer it goes without a build. The record of a build is the
# index's comment: the versions it was built over, the table's insert counter then
# (PostgreSQL's statistics, which row-level security does not hide) and when it started.
# Recall walks no index without one.

def churned(built: dict[str, Any], inserts: int) -> bool:
    """Whether `CHURN_SHARE` of the versions the build ``built`` records (at least
    `min_versions`) have been written since. The statistics reach the counter a few seconds
    late: a build counts what was written just before it as written after, which is
    harmless."""
    return inserts - built["inserts"] > CHURN_SHARE * max(built["versions"], min_versions())


def _finish_swap(conn: psycopg.Connection[Any]) -> None:
    """A swap stopped between dropping the old index and renaming the new one left a valid
    index under the build's name only: it is the index, under its name (and with its record)."""
    row = conn.execute(
        "SELECT to_regclass(%s) IS NULL AND coalesce((SELECT indisvalid FROM pg_index"
        " WHERE indexrelid = to_regclass(%s)), false)", (INDEX, _NEXT)).fetchone()
    if row is not None and row[0]:
        log.warning("finishing an interrupted swap of the vector lists index")
        conn.execute(sql.SQL("ALTER INDEX {} RENAME TO {}").format(
            sql.Identifier(_NEXT), sql.Identifier(INDEX)))


def _drop(conn: psycopg.Connection[Any], name: str) -> None:
    conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))


def _inserts(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT coalesce(n_tup_ins, 0) FROM pg_stat_all_tables"
                       " WHERE relid = 'memory_version'::regclass").fetchone()
    return 0 if row is None else int(row[0])


def _record(conn: psycopg.Connection[Any], name: str, record: dict[str, Any]) -> None:
    conn.execute(sql.SQL("COMMENT ON INDEX {} IS {}").format(
        sql.Identifier(name), sql.Literal(json.dumps(record))))


def _recorded(conn: psycopg.Connection[Any]) -> dict[str, Any] | None:
    """The index's record (versions, inserts, built_at), or None if it has none it can read."""
    row = conn.execute("SELECT obj_description(to_regclass(%s), 'pg_class')",
                       (INDEX,)).fetchone()
    if row is None or not row[0]:
        return None
    try:
        record = json.loads(row[0])
        return {"versions": int(record["versions"]), "inserts": int(record["inserts"]),
                "built_at": float(record["built_at"])}
    except (ValueError, TypeError, KeyError):
        return None


def _versions(conn: psycopg.Connection[Any]) -> int:
    # PostgreSQL's estimate, kept by autovacuum: close enough to choose a number of lists,
    # and unlike a count not hidden by row-level security from an owner bound by it.
    row = conn.execute("SELECT greatest(reltuples, 0) FROM pg_class"
                       " WHERE oid = 'memory_version'::regclass").fetchone()
    assert row is not None
    return int(row[0])
