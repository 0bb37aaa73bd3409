"""Reads on streaming replicas, behind the forget fence.

With `read_database_urls` set, recall and memory GETs are served by a streaming replica,
round robin (app/api/route.py, `REPLICA_READ_PATHS`); everything that writes, and everything
in a write's transaction, stays on the primary. A replica lags, and Lethe promises that a
forget is visible at once: a replica that has not yet replayed a forget must never serve a
recall that began after it. So:

- Every removal of a memory, or of some of its text, from what recall and the API show
  (forget, erasure, quarantine, retention, supersession, a strike or an edit, the row going)
  raises its tenant's row of `forget_fence` in the same transaction: a trigger on `memory`
  (migration 0028), so no path can forget without raising it.
- Before a read goes to a replica, the tenant's fence is read on the primary (one indexed row),
  then on the replica, beside `pg_is_in_recovery()`. A replica whose fence is at least the
  primary's has replayed the transaction of every forget committed before the read began (the
  fence and the memories change in one transaction, and a standby makes a transaction visible
  all at once); its later statements only see more. One that is behind is asked again until
  `replica_wait_seconds`; then the primary serves, counted in `lethe_replica_fallbacks_total`.
- A replica that cannot be reached, or is no longer a standby (promoted: it no longer follows
  the primary), is skipped for `replica_retry_seconds`.

What it costs per read: one round trip to the primary and one to the replica before the
read itself (docs/benchmarks.md, "Recall on a streaming replica").
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from prometheus_client import Counter
from sqlalchemy import Engine
from sqlalchemy import exc as sa_exc

from app.core import db
from app.core.config import get_settings
from app.core.metrics import REGISTRY

log = logging.getLogger(__name__)

READS = Counter(
    "lethe_replica_reads_total",
    "Reads (recalls, read-only GETs) routed while replicas are configured, by where they were "
    "served: `replica`, or `primary` (no replica had replayed the tenant's last forget in "
    "time, or none was reachable).",
    ["server"], registry=REGISTRY,
)
FALLBACKS = Counter(
    "lethe_replica_fallbacks_total",
    "Reads the primary served although replicas are configured: `lagging` (no replica had "
    "replayed the tenant's last forget within `replica_wait_seconds`) or `unavailable` (none "
    "reachable and still a standby).",
    ["reason"], registry=REGISTRY,
)
POLL_SECONDS = 0.005

# The tenant's fence on either server; and, on a replica, whether it is still a standby.
_FENCE_SQL = ("SELECT pg_is_in_recovery(), "
              "coalesce((SELECT generation FROM forget_fence WHERE tenant_id = %s), 0)")


class _Replicas:
    """The configured replicas' engines, whom to ask next, and whom to skip until when."""

    def __init__(self) -> None:
        self._turn = itertools.count()
        self._skipped_until: dict[int, float] = {}
        self._lock = threading.Lock()

    def in_turn(self) -> list[tuple[int, Engine]]:
        """The replicas not being skipped, starting with the next one's turn."""
        engines = db.replica_engines()
        if not engines:
            return []
        now = time.monotonic()
        start = next(self._turn) % len(engines)
        with self._lock:
            return [(index, engines[index]) for index in
                    ((start + offset) % len(engines) for offset in range(len(engines)))
                    if self._skipped_until.get(index, 0.0) <= now]

    def skip(self, index: int, why: str) -> None:
        log.warning("read replica %s skipped for now: %s", index, why)
        with self._lock:
            self._skipped_until[index] = time.monotonic() + get_settings().replica_retry_seconds

    def forget_skips(self) -> None:
        with self._lock:
            self._skipped_until.clear()


REPLICAS = _Replicas()


def configured() -> bool:
    return bool(db.replica_engines())


def fence(engine: Engine, tenant_id: uuid.UUID) -> tuple[bool, int]:
    """Whether ``engine``'s server is a standby, and the tenant's fence there: one round
    trip (the reads are sent, then fetched after COMMIT went out)."""
    with db.read_pipeline(tenant_id, engine=engine) as conn:
        cursor = conn.execute(_FENCE_SQL, (tenant_id,))
    row = cursor.fetchone()
    assert row is not None
    return bool(row[0]), int(row[1])


def choose(tenant_id: uuid.UUID) -> Engine | None:
    """A replica that may serve a read for ``tenant_id`` that begins now; None: the primary.

    With the fence on, a replica qualifies once it is a standby whose fence has reached the
    primary's, read first (so any forget committed before this call is counted)."""
    settings = get_settings()
    wanted = fence(db.app_engine(), tenant_id)[1] if settings.replica_fence else None
    deadline = time.monotonic() + settings.replica_wait_seconds
    while True:
        reachable = False
        for index, engine in REPLICAS.in_turn():
            try:
                standby, seen = fence(engine, tenant_id)
            except (psycopg.Error, sa_exc.DBAPIError, sa_exc.TimeoutError) as exc:
                REPLICAS.skip(index, type(exc).__name__)
                continue
            if not standby:
                REPLICAS.skip(index, "no longer a standby (promoted?)")
                continue
            reachable = True
            if wanted is None or seen >= wanted:
                READS.labels("replica").inc()
                return engine
        if not reachable or time.monotonic() >= deadline:
            READS.labels("primary").inc()
            FALLBACKS.labels("lagging" if reachable else "unavailable").inc()
            return None
        time.sleep(POLL_SECONDS)


@contextmanager
def reading(tenant_id: uuid.UUID) -> Iterator[None]:
    """Serve the recall reads (`db.read_pipeline`) in this block from a replica that passes
    the fence for ``tenant_id``, or from the primary; nothing changes without replicas.

    Chosen once, before the first read, and kept for the block: a replica only moves forward,
    so every later read there sees at least what the fence check saw."""
    if not configured():
        yield
        return
    token = db.READ_ENGINE.set(choose(tenant_id))
    try:
        yield
    finally:
        db.READ_ENGINE.reset(token)
