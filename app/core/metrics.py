"""Request metrics, recorded by the request middleware (app/core/logs.py) in this process.

Everything else `/metrics` shows is counted in the database when scraped (app/metrics/), so
it holds across the API, the workers and restarts alike.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)
REQUEST_SECONDS = Histogram(
    "lethe_request_duration_seconds",
    "Time to answer an HTTP request, by route template, method and status.",
    ["route", "method", "status"],
    registry=REGISTRY,
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)


def observe_request(*, route: str | None, method: str | None, status: int,
                    seconds: float) -> None:
    # Unmatched paths share one label: a scanner must not mint a series per URL it tries.
    REQUEST_SECONDS.labels(route or "unmatched", method or "", str(status)).observe(seconds)
