"""Task outcomes, counted by the worker's pool processes from Celery's signals.

A prefork worker runs tasks in child processes, and the API is another process again, so the
counter lives in prometheus_client's multiprocess files: `lethe worker` points
PROMETHEUS_MULTIPROC_DIR at `directory()` (emptied at start, as the library asks), every pool
process writes its own file there, and a reader adds them up: `/metrics` on the same host, and
the worker's own port (`worker_metrics_port`) for a worker on another host. A worker started
without that variable still counts, but only in memory nobody scrapes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from celery.signals import (
    task_failure,
    task_internal_error,
    task_rejected,
    task_retry,
    task_revoked,
    task_success,
)
from prometheus_client import CollectorRegistry, Counter, start_http_server
from prometheus_client.multiprocess import MultiProcessCollector

from app.core.config import get_settings

ENV = "PROMETHEUS_MULTIPROC_DIR"
OUTCOMES = Counter(
    "lethe_task_outcomes",
    "Celery tasks finished by the workers, by task name and outcome: succeeded, failed, "
    "retried, rejected, revoked.",
    ["task", "outcome"],
)


def directory() -> Path:
    """Where this host's workers keep their counts."""
    settings = get_settings()
    return (settings.task_metrics_dir or settings.data_dir / "task-metrics").resolve()


def fresh_directory() -> Path:
    """`directory()`, emptied: counts of processes that are gone would add up forever."""
    path = directory()
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


def registry(path: Path | None = None) -> CollectorRegistry | None:
    """The workers' counts added up, or None when no worker of this host has written any."""
    path = path or directory()
    if not path.is_dir():
        return None
    collected = CollectorRegistry(auto_describe=False)
    MultiProcessCollector(collected, path=str(path))
    return collected


def serve(port: int) -> None:
    """Serve the workers' counts for Prometheus on ``port`` (a thread of the worker)."""
    collected = registry()
    if collected is not None:
        start_http_server(port, addr="0.0.0.0", registry=collected)


def _name(sender: Any, request: Any = None) -> str:
    name = getattr(sender, "name", None) or getattr(request, "task", None)
    return str(name or "unknown")


def _count(outcome: str) -> Any:
    def handler(sender: Any = None, request: Any = None, **_: Any) -> None:
        OUTCOMES.labels(_name(sender, request), outcome).inc()
    return handler


# Kept in module globals: Celery's signals hold receivers weakly.
_on_success = _count("succeeded")
_on_failure = _count("failed")
_on_internal_error = _count("failed")
_on_retry = _count("retried")
_on_rejected = _count("rejected")
_on_revoked = _count("revoked")
task_success.connect(_on_success)
task_failure.connect(_on_failure)
task_internal_error.connect(_on_internal_error)
task_retry.connect(_on_retry)
task_rejected.connect(_on_rejected)
task_revoked.connect(_on_revoked)
