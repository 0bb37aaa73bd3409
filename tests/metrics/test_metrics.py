"""`/metrics`: request latency by route and status, operation outcomes and forgotten memories
per tenant, in the Prometheus text format, for the admin token only."""

from __future__ import annotations

import uuid
from typing import Any

from prometheus_client.parser import text_string_to_metric_families


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_show_latency_outcomes_and_forgotten_memories(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any],
    admin_headers: dict[str, str],
) -> None:
    written = client.post("/v1/memories", json={"subject": "user:1", "text": "Likes tea"},
                          headers=tenant["app"]).json()
    client.post("/v1/memories", json={"subject": "user:1", "text": "Owns a cat"},
                headers=tenant["app"])
    assert client.delete(f"/v1/memories/{written['id']}", headers=tenant["app"]).status_code == 204
    client.post("/v1/ingest", json={"subject": "user:1", "memories": [{"text": "Likes jazz"}]},
                headers={**tenant["app"], "Idempotency-Key": uuid.uuid4().hex})
    response = client.get("/metrics", headers=admin_headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples = _samples(response.text)
    created = ("lethe_request_duration_seconds_count",
               frozenset({("route", "/v1/memories"), ("method", "POST"), ("status", "201")}))
    assert samples[created] >= 2
    assert samples[("lethe_forgotten_memories", frozenset({("tenant", tenant["id"])}))] == 1
    assert samples[("lethe_forgotten_memories", frozenset({("tenant", other_tenant["id"])}))] == 0
    queued = ("lethe_operations", frozenset({("tenant", tenant["id"]), ("kind", "ingest"),
                                             ("status", "queued")}))
    assert samples[queued] == 1
    assert "Likes" not in response.text


def test_metrics_are_for_the_admin_token_only(client: Any, tenant: dict[str, Any]) -> None:
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=tenant["compliance"]).status_code == 403
