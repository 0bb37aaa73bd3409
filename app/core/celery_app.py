"""The Celery app, built once. Tasks live beside their domain and are listed in `TASK_MODULES`;
services never send one themselves: they enqueue it (`app/core/jobs.py`) and the unit of work
sends it after its commit.

Broker: Redis or RabbitMQ by URL in production; otherwise kombu's SQLAlchemy transport on the
same PostgreSQL, so the embedded default needs no other server. No result backend: results
could carry memory content, and callers read outcomes from operation records instead.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery
from celery.signals import setup_logging, worker_process_init, worker_ready

from app.core import logs, task_metrics
from app.core.config import get_settings

TASK_MODULES = [
    "app.access.tasks",
    "app.erasure.tasks",
    "app.idempotency.tasks",
    "app.ingestion.tasks",
    "app.invalidation.tasks",
    "app.maintenance.tasks",
    "app.forgetting.tasks",
    "app.recall.tasks",
    "app.webhooks.tasks",
]

celery_app = Celery("lethe", include=TASK_MODULES)


@setup_logging.connect
def _logs(loglevel: int | str | None = None, logfile: str | None = None, **_: Any) -> None:
    """Worker and beat log as the API does (app/core/logs.py): JSON lines, and task lines
    that quote neither an error's text nor what a task returned; to `--logfile` when given
    (Celery leaves that to whoever answers this signal)."""
    logs.configure(logging.getLevelName(loglevel) if isinstance(loglevel, str)
                   else loglevel or logging.INFO, logfile=logfile or None)


@celery_app.on_configure.connect
def _configure(sender: Celery, **_: Any) -> None:
    from app.core.runtime import get_runtime

    settings = get_settings()
    sender.conf.update(
        broker_url=get_runtime().broker_url,
        broker_connection_retry_on_startup=True,
        result_backend=None,
        task_ignore_result=True,
        task_store_errors_even_if_ignored=False,
        task_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        # A worker killed mid-task leaves the message unacknowledged, so it is redelivered.
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # A pool process reports up once it has loaded the embedding model (see
        # app/embeddings/runtime.py): seconds, tens on a busy machine, where Celery waits 4 s.
        worker_proc_alive_timeout=180.0,
        worker_hijack_root_logger=False,
        timezone="UTC",
        enable_utc=True,
        broker_transport_options=_transport_options(get_runtime().broker_url),
        beat_schedule={
            "prune-operations": {
                "task": "idempotency.prune_operations",
                "schedule": settings.prune_interval_seconds,
            },
            "decay": {"task": "forgetting.decay", "schedule": settings.decay_interval_seconds},
            "expire": {"task": "forgetting.expire", "schedule": settings.expiry_interval_seconds},
            "consolidate": {"task": "forgetting.consolidate",
                            "schedule": settings.consolidate_interval_seconds},
            "retention": {"task": "forgetting.retention",
                          "schedule": settings.retention_interval_seconds},
            "vector-lists": {"task": "recall.vector_lists",
                             "schedule": settings.vector_lists_interval_seconds},
            # Re-sends accepted jobs whose message was lost (a failed send after commit).
            "requeue-stale-jobs": {"task": "idempotency.requeue_stale_jobs",
                                   "schedule": settings.requeue_interval_seconds},
            # Re-sends webhook retries whose delayed message was lost.
            "retry-webhooks": {"task": "webhooks.retry_due", "schedule": 60.0},
            # Settles erasures whose last artifact acknowledged, re-sends lost ones.
            "erasure-sweep": {"task": "erasure.sweep",
                              "schedule": settings.erasure_sweep_interval_seconds},
        },
    )


@worker_process_init.connect
def _own_broker_engine(**_: Any) -> None:
    """A pool process must not reuse the connections of the main process's broker engine:
    kombu's SQLAlchemy transport caches one engine per URL at class level, a fork inherits
    its pooled connections, and two processes talking over one socket corrupt each other's
    conversation (seen as "prepared statement does not exist" after a pool process was
    killed). The child drops the inherited engine without closing its sockets, which stay
    the parent's, and opens its own."""
    from kombu.transport import sqlalchemy as kombu_sqlalchemy

    engines = kombu_sqlalchemy.Channel._engines
    for engine, _session in list(engines.values()):
        engine.dispose(close=False)
    engines.clear()


@worker_ready.connect
def _serve_task_metrics(**_: Any) -> None:
    """For Prometheus to scrape a worker on another host than the API."""
    port = get_settings().worker_metrics_port
    if port:
        task_metrics.serve(port)


def _transport_options(broker_url: str) -> dict[str, Any]:
    if broker_url.startswith("sqla+"):
        # kombu hands these to SQLAlchemy's create_engine; keep the broker's pool small.
        return {"pool_pre_ping": True, "pool_size": 2}
    # Redis redelivers an unacknowledged task after this long; longer than any task runs.
    return {"visibility_timeout": 3600}
