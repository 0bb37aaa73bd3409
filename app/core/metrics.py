"""Request metrics, recorded by the request middleware (app/core/logs.py) in this process, and
how long this process's requests waited for a pooled database connection (`app/core/db.py`).

Everything else `/metrics` shows is counted in the database when scraped (app/metrics/), so
it holds across the API, the workers and restarts alike.
"""

from __future__ import annotations

import os
import threading

from prometheus_client import CollectorRegistry, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)
REQUEST_SECONDS = Histogram(
    "lethe_request_duration_seconds",
    "Time to answer an HTTP request, by route template, method and status.",
    ["route", "method", "status"],
    registry=REGISTRY,
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)


class PoolWaits:
    """How long checkouts of this process's application pool waited, and the longest."""

    def __init__(self) -> None:
        self.seconds = Histogram(
            "lethe_db_pool_wait_seconds",
            "Time to take a connection from the API's application pool (a new connection's "
            "opening included); past the pool timeout a request is answered 503.",
            registry=REGISTRY,
            buckets=(0.001, 0.01, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0),
        )
        self.longest = Gauge(
            "lethe_db_pool_wait_max_seconds",
            "The longest wait for a connection of the API's pool since the process started.",
            registry=REGISTRY,
        )
        self._longest = 0.0
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        self.seconds.observe(seconds)
        with self._lock:
            if seconds > self._longest:
                self._longest = seconds
                self.longest.set(seconds)


# Not in a worker's pool processes: they count in prometheus_client's multiprocess files
# (app/core/task_metrics.py), which `/metrics` adds to this registry's, so the same families
# would appear twice there. Only the API's requests wait on their pool for an answer.
POOL_WAITS = None if "PROMETHEUS_MULTIPROC_DIR" in os.environ else PoolWaits()


def observe_request(*, route: str | None, method: str | None, status: int,
                    seconds: float) -> None:
    # Unmatched paths share one label: a scanner must not mint a series per URL it tries.
    REQUEST_SECONDS.labels(route or "unmatched", method or "", str(status)).observe(seconds)


def observe_pool_wait(seconds: float) -> None:
    if POOL_WAITS is not None:
        POOL_WAITS.observe(seconds)
