"""What `/metrics` shows besides request latency, gathered at scrape time so it holds across
the API, the workers and restarts: per-tenant figures counted in the database under row-level
security, each queue's depth asked of the broker, and the workers' task outcomes read from
their multiprocess files (app/core/task_metrics.py)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from app.core import metrics, queue_depth, task_metrics
from app.core.uow import unit_of_work
from app.erasure import service as erasures
from app.idempotency import store as operations
from app.memories import store as memories
from app.tenants import service as tenants


class DatabaseCollector(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        forgotten = GaugeMetricFamily(
            "lethe_forgotten_memories", "Forgotten memories (tombstones), per tenant.",
            labels=["tenant"])
        outcomes = GaugeMetricFamily(
            "lethe_operations",
            "Operations (background tasks and idempotent requests) by kind and status, per "
            "tenant: queued, running, succeeded, failed.",
            labels=["tenant", "kind", "status"])
        erasure_requests = GaugeMetricFamily(
            "lethe_erasure_requests", "Erasure requests by status, per tenant.",
            labels=["tenant", "status"])
        for tenant_id in tenants.all_tenant_ids():
            with unit_of_work(tenant_id) as session:
                forgotten.add_metric([str(tenant_id)],
                                     memories.count_forgotten(session, tenant_id=tenant_id))
                for (kind, status), count in operations.count_jobs(session).items():
                    outcomes.add_metric([str(tenant_id), kind, status], count)
                for status, count in erasures.count_by_status(
                        session, tenant_id=tenant_id).items():
                    erasure_requests.add_metric([str(tenant_id), status], count)
        yield forgotten
        yield outcomes
        yield erasure_requests


class QueueCollector(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily(
            "lethe_queue_depth", "Messages waiting in each Celery queue, asked of the broker.",
            labels=["queue"])
        for name, count in queue_depth.depths().items():
            depth.add_metric([name], count)
        yield depth


def exposition() -> bytes:
    """The Prometheus text format of every Lethe metric."""
    scraped = CollectorRegistry(auto_describe=False)
    scraped.register(DatabaseCollector())
    scraped.register(QueueCollector())
    body = generate_latest(metrics.REGISTRY) + generate_latest(scraped)
    workers = task_metrics.registry()
    return body + generate_latest(workers) if workers is not None else body
