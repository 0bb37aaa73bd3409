"""Consolidation: near-duplicates collapse into the newest; nothing they superseded returns."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.core import uow
from app.forgetting import consolidation
from app.forgetting import tasks as forgetting_tasks
from app.keys import digests
from app.maintenance import tasks as maintenance_tasks
from tests.concurrency import together
from tests.maintenance.helpers import run_through_worker
from tests.memories.helpers import created

SUBJECT = "user:42"


def _consolidate(tenant: dict[str, Any], subject: str | None = None) -> list[str]:
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        # Consolidation walks subjects as stored: their digests.
        return consolidation.consolidate(
            session, tenant_id=tenant_id,
            subject=None if subject is None else digests.subject_digest(tenant_id, subject))


def _get(client: Any, tenant: dict[str, Any], memory_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    return body


def _recalled(client: Any, tenant: dict[str, Any], query: str) -> tuple[set[str], set[str]]:
    """IDs recall returns as results, and IDs it shows in any history."""
    response = client.post("/v1/recall", json={"subject": SUBJECT, "query": query, "limit": 20},
                           headers=tenant["app"])
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    return ({r["memory"]["id"] for r in results},
            {h["id"] for r in results for h in r["history"]})


def _transitions(owner_conn: Any, reason: str) -> list[str]:
    return [str(row[0]) for row in owner_conn.execute(
        "SELECT target_id FROM audit_event WHERE action = 'memory.transition' AND reason = %s "
        "ORDER BY seq", (reason,))]


def _run_job(client: Any, tenant: dict[str, Any]) -> dict[str, Any]:
    accepted = client.post("/v1/maintenance/consolidate", headers=tenant["compliance"])
    assert accepted.status_code == 202, accepted.text
    assert maintenance_tasks.run(accepted.json()["operation_id"], tenant["id"]) is True
    body: dict[str, Any] = client.get(f"/v1/operations/{accepted.json()['operation_id']}",
                                      headers=tenant["app"]).json()
    assert body["status"] == "succeeded"
    return body


def test_a_corrected_fact_never_returns_after_consolidation_or_forgetting(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    berlin = created(client, tenant["app"], text="I live in Berlin.")
    lisbon = created(client, tenant["app"], text="I live in Lisbon.", supersedes=[berlin["id"]])
    # The same fact again, as a memory of its own (no slot): a restatement flags nothing.
    again = created(client, tenant["app"], text="I live in Lisbon.")
    assert lisbon["effects"]["superseded"] == [berlin["id"]]
    assert again["id"] != lisbon["id"] and again["effects"]["suspected"] == []
    queries = ("Where do I live?", "Berlin", "Which city is my home?", "I live in Berlin.")

    assert _run_job(client, tenant)["result"] == {"job": "consolidate",
                                                  "deprecated": [lisbon["id"]]}
    collapsed = _get(client, tenant, lisbon["id"])
    assert (collapsed["state"], collapsed["superseded_by"]) == ("deprecated", again["id"])
    for query in queries:
        results, history = _recalled(client, tenant, query)
        assert berlin["id"] not in results | history
        assert lisbon["id"] not in results
    assert _recalled(client, tenant, "Where do I live?") == ({again["id"]}, {lisbon["id"]})

    assert client.post(f"/v1/memories/{again['id']}/forget", json={},
                       headers=tenant["app"]).status_code == 200
    assert client.delete(f"/v1/memories/{lisbon['id']}", headers=tenant["app"]).status_code == 204
    for query in queries:
        results, history = _recalled(client, tenant, query)
        assert berlin["id"] not in results | history
    assert _get(client, tenant, berlin["id"])["state"] == "deprecated"
    listed = client.get(f"/v1/memories?subject={SUBJECT}&state=active", headers=tenant["app"])
    assert listed.json()["data"] == []
    # A later run finds nothing to bring back or collapse.
    assert _consolidate(tenant) == []
    assert _get(client, tenant, berlin["id"])["state"] == "deprecated"


def test_near_duplicates_collapse_into_the_newest_with_provenance_and_audit(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = created(client, tenant["app"], text="I'm vegetarian.")
    second = created(client, tenant["app"], text="I am a vegetarian.")
    slot = created(client, tenant["app"], text="I am vegetarian.", key="diet")
    newest = created(client, tenant["app"], text="I am vegetarian!")
    # Alike, but not restatements: one word swapped, another person, another fact.
    frontend = created(client, tenant["app"], text="I work on the frontend team.")
    backend = created(client, tenant["app"], text="I work on the backend team.")
    sister = created(client, tenant["app"], text="My sister is vegetarian.")
    nuts = created(client, tenant["app"], text="I'm allergic to peanuts.")

    deprecated = _consolidate(tenant)
    assert sorted(deprecated) == sorted([first["id"], second["id"]])
    for memory in (first, second):
        read = _get(client, tenant, memory["id"])
        assert (read["state"], read["superseded_by"], read["revision"]) == (
            "deprecated", newest["id"], 2)
    lineage = client.get(f"/v1/memories/{newest['id']}/lineage", headers=tenant["app"]).json()
    assert sorted(lineage["supersedes"]) == sorted(deprecated)
    assert sorted(p["ref"] for p in lineage["parents"] if p["kind"] == "memory") == sorted(
        deprecated)
    assert sorted(_transitions(owner_conn, "consolidated")) == sorted(deprecated)
    # A slot holder is never collapsed; the rest are untouched.
    for memory in (newest, slot, frontend, backend, sister, nuts):
        read = _get(client, tenant, memory["id"])
        assert (read["state"], read["revision"]) == ("active", 1), memory["text"]


def test_other_subjects_and_tenants_are_untouched(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    mine = created(client, tenant["app"], text="I live in Lisbon.")
    elsewhere = created(client, tenant["app"], subject="user:43", text="I live in Lisbon.")
    foreign = [created(client, other_tenant["app"], text="I live in Lisbon.") for _ in range(2)]
    assert _consolidate(tenant) == []
    assert _get(client, tenant, mine["id"])["state"] == "active"
    assert _get(client, tenant, elsewhere["id"])["state"] == "active"
    assert all(_get(client, other_tenant, m["id"])["state"] == "active" for m in foreign)
    # Restricted to one subject, a run looks at nothing else.
    duplicate = created(client, tenant["app"], subject="user:43", text="I live in Lisbon.")
    assert _consolidate(tenant, subject=SUBJECT) == []
    assert _consolidate(tenant, subject="user:43") == [elsewhere["id"]]
    assert _get(client, tenant, duplicate["id"])["state"] == "active"


def test_a_second_run_changes_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    older = created(client, tenant["app"], text="My shoe size is 42.")
    created(client, tenant["app"], text="My shoe size is 42.")
    assert _consolidate(tenant) == [older["id"]]
    events = owner_conn.execute("SELECT count(*) FROM audit_event").fetchone()[0]
    assert _consolidate(tenant) == []
    assert owner_conn.execute("SELECT count(*) FROM audit_event").fetchone()[0] == events
    assert _get(client, tenant, older["id"])["revision"] == 2


def test_two_runs_at_once_change_each_memory_once(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    older: list[str] = []
    for n in range(4):
        subject = f"user:{n}"
        older += [created(client, tenant["app"], subject=subject,
                          text=f"My locker number is {n}17.")["id"] for _ in range(2)]
        created(client, tenant["app"], subject=subject, text=f"My locker number is {n}17.")
    runs = together(lambda: _consolidate(tenant), lambda: _consolidate(tenant))
    assert sorted(runs[0] + runs[1]) == sorted(older)
    assert sorted(_transitions(owner_conn, "consolidated")) == sorted(older)
    edges = owner_conn.execute(
        "SELECT count(*) FROM provenance_edge WHERE parent_kind = 'memory'").fetchone()[0]
    assert edges == len(older)


def test_beat_consolidates_every_tenant(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    olders = [created(client, t["app"], text="I take the 8:15 train.")["id"]
              for t in (tenant, other_tenant)]
    for t in (tenant, other_tenant):
        created(client, t["app"], text="I take the 8:15 train.")
    assert forgetting_tasks.consolidate_all.run() == 2
    assert _get(client, tenant, olders[0])["state"] == "deprecated"
    assert _get(client, other_tenant, olders[1])["state"] == "deprecated"
    assert forgetting_tasks.consolidate_all.run() == 0


@pytest.mark.slow
def test_maintenance_consolidate_runs_through_a_real_worker(
    client: Any, tenant: dict[str, Any]
) -> None:
    older = created(client, tenant["app"], text="My favourite colour is teal.")
    newer = created(client, tenant["app"], text="My favourite colour is teal.")
    body = run_through_worker(client, tenant, "consolidate")
    assert body["status"] == "succeeded"
    assert body["result"] == {"job": "consolidate", "deprecated": [older["id"]]}
    assert _get(client, tenant, older["id"])["superseded_by"] == newer["id"]
