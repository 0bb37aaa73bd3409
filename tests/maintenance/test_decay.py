"""Volatility decay and the maintenance endpoint: controlled time, overlapping runs, a worker."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from app.core import uow
from app.core.models import utcnow
from app.forgetting import decay
from app.forgetting import tasks as forgetting_tasks
from app.maintenance import tasks as maintenance_tasks
from tests.concurrency import together
from tests.maintenance.helpers import run_through_worker

SUBJECT = "user:decay"


def _remember(client: Any, tenant: dict[str, Any], text: str, volatility: str) -> str:
    response = client.post("/v1/memories", json={"subject": SUBJECT, "text": text,
                                                 "volatility": volatility},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id


def _state(client: Any, tenant: dict[str, Any], memory_id: str) -> tuple[str, list[str]]:
    body = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    return body["state"], body["flags"]


def test_each_class_decays_after_its_own_half_life(client: Any, tenant: dict[str, Any]) -> None:
    trip = _remember(client, tenant, "Is in Rome this week.", "situational")
    taste = _remember(client, tenant, "Prefers aisle seats.", "preferential")
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        moved = decay.decay(session, tenant_id=uuid.UUID(tenant["id"]),
                            now=utcnow() + timedelta(days=6.9))
    assert moved == []
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        moved = decay.decay(session, tenant_id=uuid.UUID(tenant["id"]),
                            now=utcnow() + timedelta(days=7.1))
    assert moved == [trip]
    assert _state(client, tenant, trip) == ("suspect", ["stale"])
    assert _state(client, tenant, taste) == ("active", [])


def test_tenant_half_lives_and_confirmation_reset_the_clock(
    client: Any, tenant: dict[str, Any]
) -> None:
    client.patch("/v1/settings", json={"half_lives": {"preferential": 0.5}},
                 headers=tenant["compliance"])
    taste = _remember(client, tenant, "Prefers window seats.", "preferential")
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        assert decay.decay(session, tenant_id=tenant_id,
                           now=utcnow() + timedelta(days=0.6)) == [taste]
    confirmed = client.post(f"/v1/memories/{taste}/confirm", headers=tenant["app"])
    assert confirmed.json()["state"] == "active" and confirmed.json()["flags"] == []
    with uow.unit_of_work(tenant_id) as session:
        assert decay.decay(session, tenant_id=tenant_id,
                           now=utcnow() + timedelta(days=0.4)) == []


def test_two_beat_ticks_at_once_move_each_memory_once(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    ids = [_remember(client, tenant, f"Visiting friend number {n}.", "situational")
           for n in range(5)]
    owner_conn.execute("UPDATE memory SET last_validated_at = now() - interval '8 days'")
    # `.run` is the task's body: Celery's call wrapper is not safe to first-use from two
    # threads at once, and the point here is the database's serialization.
    counts = together(forgetting_tasks.decay_all.run, forgetting_tasks.decay_all.run)
    assert len(counts) == 2 and sum(counts) == 5
    events = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE to_state = 'suspect'").fetchone()[0]
    assert events == 5
    assert all(_state(client, tenant, i) == ("suspect", ["stale"]) for i in ids)


def test_maintenance_endpoint_rules(client: Any, tenant: dict[str, Any]) -> None:
    assert client.post("/v1/maintenance/decay", headers=tenant["app"]).status_code == 403
    assert client.post("/v1/maintenance/sweep", headers=tenant["compliance"]).status_code == 422
    accepted = client.post("/v1/maintenance/invalidate", headers=tenant["compliance"])
    assert accepted.status_code == 202 and accepted.json()["status"] == "queued"
    assert maintenance_tasks.run(accepted.json()["operation_id"], tenant["id"]) is True
    assert maintenance_tasks.run(accepted.json()["operation_id"], tenant["id"]) is False


@pytest.mark.slow
def test_maintenance_decay_runs_now_through_a_real_worker(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    trip = _remember(client, tenant, "Is in Oslo until Friday.", "situational")
    owner_conn.execute("UPDATE memory SET last_validated_at = now() - interval '8 days'")
    body = run_through_worker(client, tenant, "decay")
    assert body["status"] == "succeeded" and body["result"]["suspected"] == [trip]
    assert _state(client, tenant, trip) == ("suspect", ["stale"])


def test_requested_decay_commits_in_steps_and_a_crash_loses_no_result(
    client: Any, tenant: dict[str, Any], owner_conn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`POST /v1/maintenance/decay` moves a batch per transaction; what each batch moved is in
    the operation's result, so a delivery that dies midway and its redelivery together list
    every memory once."""
    from app.core.config import get_settings
    from app.maintenance import service as maintenance_service

    facts = ["Is in Oslo this week.", "Has a cold today.", "Is painting the kitchen.",
             "Waits for a parcel from Lyon.", "Rents a car until Sunday."]
    ids = [_remember(client, tenant, fact, "situational") for fact in facts]
    owner_conn.execute("UPDATE memory SET last_validated_at = now() - interval '8 days'")
    monkeypatch.setattr(get_settings(), "maintenance_batch_size", 2)
    accepted = client.post("/v1/maintenance/decay", headers=tenant["compliance"])
    operation_id = accepted.json()["operation_id"]
    real_step = maintenance_service.run_step
    steps: list[str] = []

    def dies_after_one_step(*args: Any, **kwargs: Any) -> Any:
        if steps:
            raise ConnectionError("worker lost")
        steps.append(real_step(*args, **kwargs).value)
        return maintenance_service.Step.more

    monkeypatch.setattr(maintenance_service, "run_step", dies_after_one_step)
    with pytest.raises(ConnectionError):
        maintenance_tasks.run(operation_id, tenant["id"])
    running = client.get(f"/v1/operations/{operation_id}", headers=tenant["app"]).json()
    assert running["status"] == "running" and len(running["result"]["suspected"]) == 2
    monkeypatch.setattr(maintenance_service, "run_step", real_step)
    assert maintenance_tasks.run(operation_id, tenant["id"]) is True  # the redelivery
    done = client.get(f"/v1/operations/{operation_id}", headers=tenant["app"]).json()
    assert done["status"] == "succeeded"
    assert sorted(done["result"]["suspected"]) == sorted(ids)
    assert maintenance_tasks.run(operation_id, tenant["id"]) is False
    events = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE to_state = 'suspect'").fetchone()[0]
    assert events == 5
