"""Retention: deprecated → quarantined → forgotten by age, under controlled time.

The jobs stamp `state_changed_at` with the real clock while tests pass `now`, so each step's
`now` is an offset from the real time; runs through beat use the real clock, so the tests
age memories by moving `state_changed_at` back as the owner instead of sleeping.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text as sa_text

from app.core import uow
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.core.models import utcnow
from app.forgetting import tasks as forgetting_tasks
from app.forgetting.retention import retention
from app.idempotency import store as operations
from app.maintenance import tasks as maintenance_tasks
from tests import sealed
from tests.concurrency import together
from tests.forgetting.dump import database_text
from tests.maintenance.helpers import run_through_worker

SUBJECT = "user:retention"
DAY = timedelta(days=1)


def _remember(client: Any, tenant: dict[str, Any], text: str, **extra: Any) -> str:
    response = client.post("/v1/memories", json={"subject": SUBJECT, "text": text, **extra},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id


def _deprecated(client: Any, tenant: dict[str, Any], text: str) -> str:
    """A memory superseded by a newer one (its replacement stays active)."""
    old = _remember(client, tenant, text)
    _remember(client, tenant, f"Correction of an earlier note ({uuid.uuid4().hex[:6]}).",
              supersedes=[old])
    return old


def _rejected(client: Any, tenant: dict[str, Any], text: str) -> str:
    memory_id = _remember(client, tenant, text)
    response = client.post(f"/v1/memories/{memory_id}/reject", headers=tenant["app"])
    assert response.json()["state"] == "deprecated", response.text
    return memory_id


def _state(client: Any, tenant: dict[str, Any], memory_id: str) -> str | None:
    response = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"])
    if response.status_code == 404:
        return None
    state: str = response.json()["state"]
    return state


def _run(tenant: dict[str, Any], offset: timedelta) -> dict[str, list[str]]:
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        return retention(session, tenant_id=tenant_id, now=utcnow() + offset)


def _age(owner_conn: Any, memory_ids: list[str], days: float) -> None:
    """Pretend the memories entered their state ``days`` ago (all their clocks move)."""
    owner_conn.execute(
        "UPDATE memory SET state_changed_at = state_changed_at - make_interval(secs => %s),"
        " updated_at = updated_at - make_interval(secs => %s) WHERE id = ANY(%s)",
        (days * 86400, days * 86400, [uuid.UUID(i) for i in memory_ids]))


def test_deprecated_memory_is_quarantined_after_the_tenant_window(
    client: Any, tenant: dict[str, Any]
) -> None:
    client.patch("/v1/settings", json={"retention": {"deprecated_days": 0.5}},
                 headers=tenant["compliance"])
    superseded = _deprecated(client, tenant, "Works at Initech.")
    rejected = _rejected(client, tenant, "Drives a red car.")

    assert _run(tenant, 0.4 * DAY) == {"quarantined": [], "forgotten": []}
    moved = _run(tenant, 0.6 * DAY)
    assert sorted(moved["quarantined"]) == sorted([superseded, rejected])
    assert moved["forgotten"] == []
    assert _state(client, tenant, superseded) == _state(client, tenant, rejected) == "quarantined"


def test_an_edit_of_a_deprecated_memory_does_not_restart_its_clock(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.patch("/v1/settings", json={"retention": {"deprecated_days": 1}},
                 headers=tenant["compliance"])
    memory_id = _rejected(client, tenant, "Plays the cello.")
    _age(owner_conn, [memory_id], 1.5)
    patched = client.patch(f"/v1/memories/{memory_id}", json={"metadata": {"note": "kept"}},
                           headers={**tenant["app"], "If-Match": '"2"'})
    assert patched.status_code == 200 and patched.json()["state"] == "deprecated", patched.text

    assert _run(tenant, timedelta(0))["quarantined"] == [memory_id]


def test_quarantined_memory_is_forgotten_after_its_window_and_its_text_is_gone(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.patch("/v1/settings", json={"retention": {"deprecated_days": 1,
                                                     "quarantine_days": 2.5}},
                 headers=tenant["compliance"])
    text = "Keeps a spare key under the blue flowerpot by the shed."
    created = client.post("/v1/memories", json={"subject": SUBJECT, "text": text},
                          headers={**tenant["app"], "Idempotency-Key": "spare-key"})
    memory_id = created.json()["id"]
    client.post(f"/v1/memories/{memory_id}/reject", headers=tenant["app"])

    assert _run(tenant, 1.1 * DAY)["quarantined"] == [memory_id]
    # Quarantine keeps it for audit (sealed, as every text is stored).
    assert sealed.texts(owner_conn, "m.id = %s", (memory_id,)) == [text]
    assert _run(tenant, 2.4 * DAY) == {"quarantined": [], "forgotten": []}
    assert _run(tenant, 2.6 * DAY) == {"quarantined": [], "forgotten": [memory_id]}

    assert client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 404
    dump = database_text(owner_conn)
    assert text not in dump and "flowerpot" not in dump
    # Purged, not merely sealed: the subject's key still exists after a forget.
    assert sealed.texts(owner_conn, "m.id = %s", (memory_id,)) == [""]
    # Nobody asked for this forget: no retraction; the audit chain records every move.
    assert owner_conn.execute("SELECT count(*) FROM retraction").fetchone()[0] == 0
    moves = owner_conn.execute(
        "SELECT from_state, to_state, actor FROM audit_event WHERE target_id = %s "
        "ORDER BY seq", (memory_id,)).fetchall()
    assert moves[-2:] == [("deprecated", "quarantined", "system:retention"),
                          ("quarantined", "forgotten", "system:retention")]
    verify = client.get("/v1/audit/verify", headers=tenant["compliance"]).json()
    assert verify["ok"] is True


def test_compliance_and_archive_quarantines_age_out_too(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    decided = _remember(client, tenant, "Owes the landlord two months of rent.")
    client.post(f"/v1/memories/{decided}/quarantine", headers=tenant["compliance"])
    archived = _remember(client, tenant, "I collect rare vintage stamps from Peru.")
    answer = client.post("/v1/forget", json={"subject": SUBJECT, "delete": False,
                                             "about": "that I collect vintage stamps"},
                         headers=tenant["app"]).json()
    assert answer["quarantined"] == [archived], answer
    _age(owner_conn, [decided, archived], 31)

    assert sorted(_run(tenant, timedelta(0))["forgotten"]) == sorted([decided, archived])
    assert "vintage stamps from Peru" not in database_text(owner_conn)
    assert sealed.texts(owner_conn, "m.id IN (%s, %s)", (decided, archived)) == ["", ""]


def test_live_memories_and_other_tenants_are_untouched_and_a_rerun_changes_nothing(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    active = _remember(client, tenant, "Speaks Portuguese at home.")
    suspect = _remember(client, tenant, "Is in Lisbon this week.", volatility="situational")
    owner_conn.execute("UPDATE memory SET last_validated_at = now() - interval '8 days' "
                       "WHERE id = %s", (uuid.UUID(suspect),))
    forgetting_tasks.decay_all.run()
    mine = _rejected(client, tenant, "Has a season ticket for Benfica.")
    theirs = _rejected(client, other_tenant, "Has a season ticket for Porto.")
    _age(owner_conn, [active, suspect, mine, theirs], 400)

    first = _run(tenant, timedelta(0))
    assert first == {"quarantined": [mine], "forgotten": []}
    assert _run(tenant, timedelta(0)) == {"quarantined": [], "forgotten": []}
    assert _state(client, tenant, active) == "active"
    assert _state(client, tenant, suspect) == "suspect"
    assert _state(client, other_tenant, theirs) == "deprecated"


def test_two_beat_runs_at_once_move_each_memory_once(
    client: Any, tenant: dict[str, Any], owner_conn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small batches, so the two runs collide batch by batch, not once.
    monkeypatch.setattr(get_settings(), "maintenance_batch_size", 2)
    deprecated = [_rejected(client, tenant, f"Old phone number variant {n}.") for n in range(5)]
    quarantined = [_remember(client, tenant, f"Disputed invoice number {n}.") for n in range(3)]
    for memory_id in quarantined:
        client.post(f"/v1/memories/{memory_id}/quarantine", headers=tenant["compliance"])
    _age(owner_conn, deprecated + quarantined, 31)
    # `.run` is the task's body: Celery's call wrapper is not safe to first-use from two
    # threads at once, and the point here is the database's serialization.
    counts = together(forgetting_tasks.retention_all.run, forgetting_tasks.retention_all.run)

    assert len(counts) == 2 and sum(counts) == 8
    events = dict(owner_conn.execute(
        "SELECT to_state, count(*) FROM audit_event WHERE actor = 'system:retention' "
        "GROUP BY to_state").fetchall())
    assert events == {"quarantined": 5, "forgotten": 3}
    assert all(_state(client, tenant, i) == "quarantined" for i in deprecated)
    assert all(_state(client, tenant, i) is None for i in quarantined)
    assert client.get("/v1/audit/verify", headers=tenant["compliance"]).json()["ok"] is True


def test_beat_runs_retention_daily_for_every_tenant(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    mine = _rejected(client, tenant, "Rents a flat on Rua Augusta.")
    theirs = _rejected(client, other_tenant, "Rents a flat on Avenida da Liberdade.")
    _age(owner_conn, [mine, theirs], 30.5)

    assert forgetting_tasks.retention_all() == 2
    assert _state(client, tenant, mine) == "quarantined"
    assert _state(client, other_tenant, theirs) == "quarantined"
    assert forgetting_tasks.retention_all() == 0
    entry = celery_app.conf.beat_schedule["retention"]
    assert entry == {"task": "forgetting.retention", "schedule": 86400.0}
    assert "forgetting.retention" in celery_app.tasks


def test_maintenance_retention_answers_with_what_moved(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id = _rejected(client, tenant, "Parks on level minus two.")
    _age(owner_conn, [memory_id], 31)
    accepted = client.post("/v1/maintenance/retention", headers=tenant["compliance"])
    assert accepted.status_code == 202 and accepted.json()["status"] == "queued"
    assert maintenance_tasks.run(accepted.json()["operation_id"], tenant["id"]) is True
    assert maintenance_tasks.run(accepted.json()["operation_id"], tenant["id"]) is False
    operation_id = accepted.json()["operation_id"]
    body = client.get(f"/v1/operations/{operation_id}", headers=tenant["app"]).json()
    assert body["result"] == {"job": "retention", "quarantined": [memory_id], "forgotten": []}


def test_a_forget_finds_the_stored_answers_to_redact_by_index(tenant: dict[str, Any]) -> None:
    # Each forget redacts the stored answers naming the memory; a retention run forgets
    # thousands, so that lookup must not scan every operation record, row security included.
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        session.execute(sa_text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(row[0] for row in session.execute(
            sa_text("EXPLAIN " + str(operations.REDACT_ANSWERS_OF)),
            {"memory_ids": [str(uuid.uuid4())], "state": "forgotten"}))
    assert "ix_operation_response_id" in plan, plan


@pytest.mark.slow
def test_maintenance_retention_runs_now_through_a_real_worker(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    text = "Hides the diary in the piano bench."
    deprecated = _rejected(client, tenant, "Takes the 7:40 ferry to work.")
    quarantined = _remember(client, tenant, text)
    client.post(f"/v1/memories/{quarantined}/quarantine", headers=tenant["compliance"])
    _age(owner_conn, [deprecated, quarantined], 31)
    body = run_through_worker(client, tenant, "retention")
    assert body["status"] == "succeeded", body
    assert body["result"] == {"job": "retention", "quarantined": [deprecated],
                              "forgotten": [quarantined]}
    assert _state(client, tenant, deprecated) == "quarantined"
    assert _state(client, tenant, quarantined) is None
    assert text not in database_text(owner_conn)
    assert sealed.texts(owner_conn, "m.id = %s", (quarantined,)) == [""]
