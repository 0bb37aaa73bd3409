"""Dependency changes: the support-copilot case, idempotent and overlapping runs, a real worker."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from app.core.runtime import get_runtime
from app.invalidation import tasks as dependency_tasks
from tests.concurrency import together
from tests.core.test_celery_worker import worker

SUBJECT = "account:acme"


def _remember(client: Any, tenant: dict[str, Any], text: str, **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/memories", json={"subject": SUBJECT, "text": text, **extra},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def _put(client: Any, tenant: dict[str, Any], value: str) -> dict[str, Any]:
    response = client.put("/v1/dependencies/product.version", json={"value": value},
                          headers=tenant["app"])
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _read(client: Any, tenant: dict[str, Any], memory_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    return body


def test_a_workaround_for_an_old_version_stops_being_served_as_current(
    client: Any, tenant: dict[str, Any]
) -> None:
    workaround = _remember(client, tenant, "To export reports, disable the beta toggle first.",
                           volatility="procedural", depends_on={"product.version": "4.1"})
    plan = _remember(client, tenant, "Acme is on the Enterprise plan.", volatility="structural")
    first = _put(client, tenant, "4.1")
    assert first["changed"] is True
    dependency_tasks.invalidate(first["invalidation"]["operation_id"], tenant["id"])
    assert _read(client, tenant, workaround["id"])["state"] == "active"
    same = _put(client, tenant, "4.1")
    assert same["changed"] is False and same["invalidation"] is None
    moved = _put(client, tenant, "4.2")
    assert moved["changed"] is True and moved["invalidation"]["status"] == "queued"
    assert dependency_tasks.invalidate(moved["invalidation"]["operation_id"], tenant["id"]) is True
    suspect = _read(client, tenant, workaround["id"])
    assert suspect["state"] == "suspect" and suspect["flags"] == ["dependency-changed"]
    assert _read(client, tenant, plan["id"]) == {**plan_without_effects(plan)}
    query = {"subject": SUBJECT, "query": "how do I export reports?"}
    results = client.post("/v1/recall", json=query, headers=tenant["app"]).json()["results"]
    flagged = {r["memory"]["id"]: r["flags"] for r in results}
    assert flagged[workaround["id"]] == ["suspect", "dependency-changed"]
    current = client.post("/v1/recall", json={**query, "include_suspect": False},
                          headers=tenant["app"]).json()["results"]
    assert workaround["id"] not in [r["memory"]["id"] for r in current]
    operation = client.get(f"/v1/operations/{moved['invalidation']['operation_id']}",
                           headers=tenant["app"]).json()
    assert operation["status"] == "succeeded"
    assert operation["result"]["suspected"] == [workaround["id"]]
    listed = client.get("/v1/dependencies", headers=tenant["app"]).json()["data"]
    assert [(d["key"], d["value"]) for d in listed] == [("product.version", "4.2")]


def plan_without_effects(memory: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in memory.items() if k != "effects"}


def test_reruns_and_overlapping_runs_mark_once(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = _remember(client, tenant, "Restart the sync agent after upgrading.",
                       depends_on={"product.version": "4.1"})
    operation_id = _put(client, tenant, "4.2")["invalidation"]["operation_id"]
    def run() -> bool:
        return bool(dependency_tasks.invalidate.run(operation_id, tenant["id"]))

    outcomes = together(run, run)
    assert sorted(outcomes) == [False, True]
    assert dependency_tasks.invalidate(operation_id, tenant["id"]) is False
    # A second change queued before the first job ran converges too.
    second = _put(client, tenant, "4.3")["invalidation"]["operation_id"]
    dependency_tasks.invalidate(second, tenant["id"])
    after = _read(client, tenant, memory["id"])
    assert after["revision"] == 2 and after["flags"] == ["dependency-changed"]
    events = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE target_id = %s AND to_state = 'suspect'",
        (memory["id"],)).fetchone()[0]
    assert events == 1


def test_bad_dependency_requests_are_refused(client: Any, tenant: dict[str, Any]) -> None:
    for body in ({}, {"value": ""}, {"value": 4.2}, {"value": "x", "extra": 1}):
        response = client.put("/v1/dependencies/product.version", json=body,
                              headers=tenant["app"])
        assert response.status_code == 422, body
    assert client.put("/v1/dependencies/x", json={"value": "1"}).status_code == 401


@pytest.mark.slow
def test_invalidation_runs_through_a_real_worker(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = _remember(client, tenant, "Clear the cache after each deploy.",
                       depends_on={"product.version": "4.1"})
    operation_id = _put(client, tenant, "5.0")["invalidation"]["operation_id"]
    queue = f"test-{uuid.uuid4().hex[:8]}"
    with worker(get_runtime().broker_url, queue) as process:
        dependency_tasks.invalidate.apply_async(args=[operation_id, tenant["id"]], queue=queue)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if _read(client, tenant, memory["id"])["state"] == "suspect":
                break
            assert process.poll() is None, "worker died"
            time.sleep(0.3)
    assert _read(client, tenant, memory["id"])["flags"] == ["dependency-changed"]
