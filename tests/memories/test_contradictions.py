"""Contradiction detection on write, through the API, under each tenant's thresholds.

The rule itself is tested on its labelled fixture in tests/text/test_supersession.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.core import uow
from app.ingestion import tasks as ingestion_tasks
from app.invalidation import service as dependencies
from app.tenant_settings.schemas import Supersession
from app.text.supersession import DEFAULT
from tests.ingestion.helpers import accepted
from tests.memories.helpers import created, remember

SUBJECT = "user:42"


def test_default_thresholds_are_the_documented_ones() -> None:
    defaults = Supersession()
    assert (DEFAULT.change_word_min, DEFAULT.contradiction_min, DEFAULT.restatement_min) == (
        defaults.change_word_min_similarity, defaults.contradiction_min_similarity,
        defaults.restatement_min_similarity)


# ------------------------------------------------------------------------------------------
# Through the API
# ------------------------------------------------------------------------------------------

def _get(client: Any, tenant: dict[str, Any], memory_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    return body


def _transitions(owner_conn: Any, memory_id: str) -> list[tuple[str, str, str]]:
    return [tuple(row) for row in owner_conn.execute(
        "SELECT from_state, to_state, reason FROM audit_event "
        "WHERE target_id = %s AND action = 'memory.transition' ORDER BY seq", (memory_id,))]


def test_a_contradicting_write_marks_the_old_memory_suspect(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    old = created(client, tenant["app"], text="My phone number is 555-1234.")
    new = created(client, tenant["app"], text="My phone number is 555-9876.")
    assert new["effects"]["suspected"] == [old["id"]]
    assert new["effects"]["superseded"] == [] and new["state"] == "active"
    read = _get(client, tenant, old["id"])
    assert (read["state"], read["flags"], read["revision"]) == ("suspect", ["contradicted"], 2)
    [(from_state, to_state, reason)] = _transitions(owner_conn, old["id"])
    assert (from_state, to_state) == ("active", "suspect")
    assert reason.startswith(f"contradicted by {new['id']}")
    audit = client.get(f"/v1/audit?target_id={old['id']}", headers=tenant["compliance"])
    assert [(e["action"], e["to_state"]) for e in audit.json()["data"]] == [
        ("memory.created", None), ("memory.transition", "suspect")]


def test_recall_returns_the_contradicted_memory_flagged(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = created(client, tenant["app"], text="I live in Berlin.")
    created(client, tenant["app"], text="I moved to Lisbon last month.")
    results = client.post("/v1/recall", json={"subject": SUBJECT, "query": "Where do I live?"},
                          headers=tenant["app"]).json()["results"]
    flagged = [r for r in results if r["memory"]["id"] == old["id"]]
    assert flagged and flagged[0]["flags"] == ["suspect", "contradicted"]
    assert flagged[0]["memory"]["state"] == "suspect"


@pytest.mark.parametrize(("first", "second"), [
    ("I live in Berlin.", "I live in Berlin."),
    ("I live in Berlin.", "I'm living in Berlin."),
    ("My sister lives in Madrid.", "My brother lives in Oslo."),
    ("I'm allergic to peanuts.", "I'm allergic to penicillin."),
])
def test_restatements_and_unrelated_facts_flag_nothing(
    client: Any, tenant: dict[str, Any], first: str, second: str
) -> None:
    old = created(client, tenant["app"], text=first)
    new = created(client, tenant["app"], text=second)
    assert new["effects"]["suspected"] == []
    read = _get(client, tenant, old["id"])
    assert (read["state"], read["flags"], read["revision"]) == ("active", [], 1)


def test_another_subject_or_tenant_is_never_flagged(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    elsewhere = created(client, tenant["app"], subject="user:43", text="My phone is 555-1234.")
    foreign = created(client, other_tenant["app"], text="My phone is 555-1234.")
    new = created(client, tenant["app"], text="My phone is 555-9876.")
    assert new["effects"]["suspected"] == []
    assert _get(client, tenant, elsewhere["id"])["state"] == "active"
    assert _get(client, other_tenant, foreign["id"])["state"] == "active"


def test_a_replayed_write_does_not_flag_twice(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    old = created(client, tenant["app"], text="My shoe size is 42.")
    headers = {**tenant["app"], "Idempotency-Key": "shoe-44"}
    body = {"subject": SUBJECT, "text": "My shoe size is 44."}
    first = client.post("/v1/memories", json=body, headers=headers)
    again = client.post("/v1/memories", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["effects"]["suspected"] == [old["id"]]
    assert _get(client, tenant, old["id"])["revision"] == 2
    assert len(_transitions(owner_conn, old["id"])) == 1


def test_an_already_suspect_memory_gets_the_flag_and_one_more_revision(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    old = created(client, tenant["app"], text="We run PostgreSQL 14 in production.",
                  depends_on={"db": "14"})
    assert client.put("/v1/dependencies/db", json={"value": "16"},
                      headers=tenant["app"]).status_code == 200
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        dependencies.invalidate_key(session, tenant_id=uuid.UUID(tenant["id"]), key="db")
    before = _get(client, tenant, old["id"])
    assert (before["state"], before["flags"]) == ("suspect", ["dependency-changed"])
    new = created(client, tenant["app"], text="We upgraded production to PostgreSQL 16.")
    assert new["effects"]["suspected"] == [old["id"]]
    after = _get(client, tenant, old["id"])
    assert after["flags"] == ["dependency-changed", "contradicted"]
    assert (after["state"], after["revision"]) == ("suspect", before["revision"] + 1)
    assert len(_transitions(owner_conn, old["id"])) == 1  # no second state change
    # A third statement of the change adds no second flag and no revision.
    third = created(client, tenant["app"], text="Production now runs PostgreSQL 16.")
    assert old["id"] not in third["effects"]["suspected"]
    assert _get(client, tenant, old["id"])["revision"] == after["revision"]


def test_a_slot_write_never_flags_its_own_memory(client: Any, tenant: dict[str, Any]) -> None:
    old = created(client, tenant["app"], key="phone", text="My phone number is 555-1234.")
    response = remember(client, tenant["app"], key="phone", text="My phone number is 555-9876.")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["id"] == old["id"] and body["effects"]["suspected"] == []
    assert (body["state"], body["flags"], body["revision"]) == ("active", [], 2)


def test_a_slot_write_flags_another_memory_it_contradicts(
    client: Any, tenant: dict[str, Any]
) -> None:
    loose = created(client, tenant["app"], text="Lives in Lisbon.")
    slot = created(client, tenant["app"], key="home", text="Lives in Lisbon, Portugal.")
    assert slot["effects"]["suspected"] == []
    moved = remember(client, tenant["app"], key="home", text="Lives in Porto now.").json()
    assert moved["id"] == slot["id"] and moved["effects"]["suspected"] == [loose["id"]]


def test_an_explicitly_superseded_memory_is_not_also_suspected(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = created(client, tenant["app"], text="My phone number is 555-1234.")
    new = created(client, tenant["app"], text="My phone number is 555-9876.",
                  supersedes=[old["id"]])
    assert new["effects"] == {"superseded": [old["id"]], "suspected": [], "retraction": None}
    read = _get(client, tenant, old["id"])
    assert (read["state"], read["flags"]) == ("deprecated", [])


def test_ingested_items_flag_what_they_contradict(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = created(client, tenant["app"], subject="user:7", text="I drive a Toyota Corolla.")
    operation_id = accepted(client, tenant["app"], "cars", {
        "subject": "user:7", "source": "conversation:9",
        "memories": [{"text": "I sold my Corolla and now drive a Tesla Model 3."}],
    })
    ingestion_tasks.apply_ingestion(operation_id, tenant["id"])
    read = _get(client, tenant, old["id"])
    assert (read["state"], read["flags"]) == ("suspect", ["contradicted"])


def test_the_tenants_thresholds_decide(client: Any, tenant: dict[str, Any]) -> None:
    raised = client.patch("/v1/settings", json={"supersession": {
        "restatement_min_similarity": 0.995, "contradiction_min_similarity": 0.99,
        "change_word_min_similarity": 0.99}}, headers=tenant["compliance"])
    assert raised.status_code == 200, raised.text
    old = created(client, tenant["app"], text="My phone number is 555-1234.")
    new = created(client, tenant["app"], text="My phone number is 555-9876.")  # cosine ≈ 0.98
    assert new["effects"]["suspected"] == []
    assert _get(client, tenant, old["id"])["state"] == "active"
