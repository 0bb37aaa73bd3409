"""What `/metrics` shows besides request latency: counted in the database at scrape time, per
tenant under row-level security, so workers' outcomes and restarts need no shared state."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from app.core import metrics
from app.core.uow import unit_of_work
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
        for tenant_id in tenants.all_tenant_ids():
            with unit_of_work(tenant_id) as session:
                forgotten.add_metric([str(tenant_id)],
                                     memories.count_forgotten(session, tenant_id=tenant_id))
                for (kind, status), count in operations.count_jobs(session).items():
                    outcomes.add_metric([str(tenant_id), kind, status], count)
        yield forgotten
        yield outcomes


def exposition() -> bytes:
    """The Prometheus text format of every Lethe metric."""
    scraped = CollectorRegistry(auto_describe=False)
    scraped.register(DatabaseCollector())
    return generate_latest(metrics.REGISTRY) + generate_latest(scraped)
