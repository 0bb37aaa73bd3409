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


def _value(client: Any, admin_headers: dict[str, str], name: str, **labels: str) -> float:
    response = client.get("/metrics", headers=admin_headers)
    assert response.status_code == 200
    return _samples(response.text).get((name, frozenset(labels.items())), 0.0)


def test_erasures_by_status_move_when_a_request_is_filed_and_cancelled(
    client: Any, tenant: dict[str, Any], admin_headers: dict[str, str],
) -> None:
    def erasures(status: str) -> float:
        return _value(client, admin_headers, "lethe_erasure_requests",
                      tenant=tenant["id"], status=status)

    assert erasures("pending") == 0
    filed = client.patch("/v1/settings", json={"erasure": {"require_approval": True}},
                         headers={**tenant["compliance"], "Idempotency-Key": uuid.uuid4().hex})
    assert filed.status_code == 200, filed.text
    request = client.post("/v1/erasure-requests", json={"subject": "user:9"},
                          headers={**tenant["compliance"], "Idempotency-Key": uuid.uuid4().hex})
    assert request.status_code == 202, request.text
    assert erasures("pending_approval") == 1
    cancelled = client.post(f"/v1/erasure-requests/{request.json()['id']}/cancel",
                            headers={**tenant["compliance"], "Idempotency-Key": uuid.uuid4().hex})
    assert cancelled.status_code == 200, cancelled.text
    assert erasures("pending_approval") == 0
    assert erasures("cancelled") == 1


def test_queue_depth_counts_a_task_waiting_for_a_worker(
    client: Any, tenant: dict[str, Any], admin_headers: dict[str, str],
) -> None:
    before = _value(client, admin_headers, "lethe_queue_depth", queue="celery")
    accepted = client.post("/v1/ingest",
                           json={"subject": "user:1", "memories": [{"text": "Likes jazz"}]},
                           headers={**tenant["app"], "Idempotency-Key": uuid.uuid4().hex})
    assert accepted.status_code == 202, accepted.text
    assert _value(client, admin_headers, "lethe_queue_depth", queue="celery") == before + 1
