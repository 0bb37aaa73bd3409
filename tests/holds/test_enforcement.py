"""Holds win (invariant 8): every path that destroys content meets the hold; nothing else does.

One test per path: DELETE, forget, forget by description (whole and strike, dry run), forget
requests detected in writes and in ingestion, retention; and the paths that destroy nothing
(supersession, rejection, recall, archive quarantine) treat a held memory as usual.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from app.core import uow
from app.core.models import utcnow
from app.forgetting.forget import forget_one
from app.forgetting.retention import retention
from app.holds import service as holds
from app.ingestion import tasks as ingestion_tasks
from app.maintenance import tasks as maintenance_tasks
from app.memories import store
from app.memories.errors import LegalHold
from tests.holds.helpers import SUBJECT, hold, release, remember, state, texts
from tests.ingestion.helpers import accepted, operation

SNEAKERS = "that I collect sneakers"
LEGAL_HOLD = "https://lethe.dev/problems/legal-hold"


def _forget(client: Any, tenant: dict[str, Any], **body: Any) -> dict[str, Any]:
    response = client.post("/v1/forget", json={"subject": SUBJECT, "about": SNEAKERS, **body},
                           headers=tenant["app"])
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _rows(owner_conn: Any) -> tuple[int, ...]:
    return tuple(owner_conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                 for table in ("audit_event", "source_exclusion", "retraction",
                               "memory_version"))


def test_delete_and_forget_of_a_held_memory_are_409_and_change_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id = remember(client, tenant, "Signed the contract in Oslo.", source="mail:4")
    hold(client, tenant, memory_ids=[memory_id])
    before = _rows(owner_conn)
    refusals = [client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]),
                client.post(f"/v1/memories/{memory_id}/forget", json={},
                            headers=tenant["app"]),
                client.post(f"/v1/memories/{memory_id}/forget",
                            json={"exclude_source": False}, headers=tenant["app"])]
    for response in refusals:
        assert response.status_code == 409, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["type"] == LEGAL_HOLD
        assert response.json()["memory_id"] == memory_id
    # The exclusion the forget made before it met the hold was rolled back with it.
    assert _rows(owner_conn) == before
    shown = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    assert shown["state"] == "active" and shown["revision"] == 1
    assert texts(owner_conn, memory_id) == ["Signed the contract in Oslo."]
    assert client.post("/v1/memories", json={"subject": SUBJECT, "text": "Again.",
                                             "source": "mail:4"},
                       headers=tenant["app"]).status_code == 201


def test_excluding_a_held_memory_s_source_destroys_nothing_and_is_allowed(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id = remember(client, tenant, "Signed the contract in Oslo.", source="mail:4")
    hold(client, tenant, subject=SUBJECT)
    response = client.post(f"/v1/memories/{memory_id}/forget", json={"delete": False},
                           headers=tenant["app"])
    assert response.status_code == 200, response.text
    assert response.json()["excluded_source"] == "mail:4"
    assert state(owner_conn, memory_id) == "active"


def test_after_release_the_memory_can_be_forgotten(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id = remember(client, tenant, "Signed the contract in Oslo.")
    placed = hold(client, tenant, subject=SUBJECT)
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 409
    release(client, tenant, placed["id"])
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
    assert state(owner_conn, memory_id) == "forgotten"
    assert texts(owner_conn, memory_id) == [""]


def test_forget_by_description_lists_a_held_target_and_forgets_the_others(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    held = remember(client, tenant, "I collect rare sneakers.")
    free = remember(client, tenant, "I collect vintage sneakers from Japan.")
    placed = hold(client, tenant, memory_ids=[held])

    preview = _forget(client, tenant, dry_run=True)
    assert preview["held"] == [held] and preview["forgotten"] == [free]
    answer = _forget(client, tenant)

    assert answer["held"] == [held] and answer["forgotten"] == [free]
    assert answer["unresolved"] is False
    assert state(owner_conn, held) == "active"
    assert texts(owner_conn, held) == ["I collect rare sneakers."]
    assert state(owner_conn, free) == "forgotten"
    counted = owner_conn.execute("SELECT memory_count FROM retraction").fetchone()[0]
    assert counted == 1  # the retraction names what was forgotten, not what was kept
    release(client, tenant, placed["id"])
    assert _forget(client, tenant)["forgotten"] == [held]


def test_a_strike_of_a_held_memory_is_listed_and_its_text_untouched(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    text = "I live in Leeds. I collect sneakers. I work as a nurse."
    memory_id = remember(client, tenant, text)
    hold(client, tenant, subject=SUBJECT)
    for delete in (True, False):  # a strike without delete is a new version all the same
        answer = _forget(client, tenant, delete=delete)
        assert answer["held"] == [memory_id] and answer["struck"] == [], answer
    assert texts(owner_conn, memory_id) == [text]
    assert client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()[
        "revision"] == 1


def test_an_archive_forget_quarantines_a_held_memory_which_then_stays_quarantined(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id = remember(client, tenant, "I collect rare sneakers.")
    hold(client, tenant, subject=SUBJECT)
    assert _forget(client, tenant, delete=False)["quarantined"] == [memory_id]
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        moved = retention(session, tenant_id=tenant_id, now=utcnow() + timedelta(days=400))
    assert moved["forgotten"] == []
    assert state(owner_conn, memory_id) == "quarantined"
    assert texts(owner_conn, memory_id) == ["I collect rare sneakers."]


def test_retention_keeps_a_held_quarantined_memory_and_forgets_the_rest_in_the_same_batch(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    held = remember(client, tenant, "Owes the landlord rent.")
    free = remember(client, tenant, "Parks on the street.")
    for memory_id in (held, free):
        response = client.post(f"/v1/memories/{memory_id}/quarantine",
                               headers=tenant["compliance"])
        assert response.status_code == 200, response.text
    # The held one is older: were it selected, it would fill a batch of one.
    owner_conn.execute("UPDATE memory SET state_changed_at = now() - interval '40 days' "
                       "WHERE id = %s", (held,))
    hold(client, tenant, memory_ids=[held])
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        moved = retention(session, tenant_id=tenant_id, now=utcnow() + timedelta(days=31),
                          limit=1)
    assert moved == {"quarantined": [], "forgotten": [free]}
    assert state(owner_conn, held) == "quarantined" and state(owner_conn, free) == "forgotten"
    # The job as beat and the maintenance endpoint run it (real clock: the held one is due).
    answer = client.post("/v1/maintenance/retention", headers=tenant["compliance"])
    assert answer.status_code == 202, answer.text
    assert maintenance_tasks.run(answer.json()["operation_id"], tenant["id"]) is True
    result = client.get(f"/v1/operations/{answer.json()['operation_id']}",
                        headers=tenant["app"]).json()
    assert result["status"] == "succeeded" and result["result"]["forgotten"] == [], result
    assert state(owner_conn, held) == "quarantined"


def test_the_lifecycle_refuses_a_held_memory_whatever_path_calls_it(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id = remember(client, tenant, "Signed the contract in Oslo.")
    hold(client, tenant, subject=SUBJECT)
    tenant_id = uuid.UUID(tenant["id"])
    with pytest.raises(LegalHold), uow.unit_of_work(tenant_id) as session:
        memory = store.lock(session, tenant_id=tenant_id, ids=[uuid.UUID(memory_id)])
        forget_one(session, memory[uuid.UUID(memory_id)], reason="test", actor="system:test")
    assert state(owner_conn, memory_id) == "active"


def test_a_detected_forget_request_lists_the_held_memory(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.patch("/v1/settings", json={"detect_forget_requests": True},
                 headers=tenant["compliance"])
    memory_id = remember(client, tenant, "I collect rare sneakers.")
    hold(client, tenant, subject=SUBJECT)
    handled = client.post("/v1/memories", json={
        "subject": SUBJECT, "text": "Please forget that I collect sneakers."},
        headers=tenant["app"])
    assert handled.status_code == 200, handled.text
    retraction = handled.json()["effects"]["retraction"]
    assert retraction["held"] == [memory_id] and retraction["forgotten"] == []
    assert state(owner_conn, memory_id) == "active"


def test_an_ingested_forget_request_lists_the_held_memory(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.patch("/v1/settings", json={"detect_forget_requests": True},
                 headers=tenant["compliance"])
    memory_id = remember(client, tenant, "I collect rare sneakers.")
    hold(client, tenant, subject=SUBJECT)
    operation_id = accepted(client, tenant["app"], "held-ingest", {
        "subject": SUBJECT, "messages": [
            {"role": "user", "content": "Please forget that I collect sneakers."}]})
    ingestion_tasks.apply_ingestion(operation_id, tenant["id"])
    done = operation(owner_conn, operation_id)
    assert done["status"] == "succeeded", done
    [asked] = done["result"]["forget_requests"]
    assert asked["held"] == [memory_id] and asked["forgotten"] == []
    assert state(owner_conn, memory_id) == "active"


def test_a_held_memory_is_superseded_rejected_and_recalled_as_usual(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = remember(client, tenant, "Works at Initech.")
    doubted = remember(client, tenant, "Drives a red car.")
    hold(client, tenant, subject=SUBJECT)
    recalled = client.post("/v1/recall", json={"subject": SUBJECT, "query": "Initech"},
                           headers=tenant["app"]).json()
    assert old in [r["memory"]["id"] for r in recalled["results"]]
    new = remember(client, tenant, "Works at Globex now.", supersedes=[old])
    shown = client.get(f"/v1/memories/{old}", headers=tenant["app"]).json()
    assert shown["state"] == "deprecated" and shown["superseded_by"] == new
    rejected = client.post(f"/v1/memories/{doubted}/reject", headers=tenant["app"])
    assert rejected.status_code == 200 and rejected.json()["state"] == "deprecated"


def test_covering_names_the_oldest_active_hold_of_each_memory_in_one_call(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    by_subject = remember(client, tenant, "Lives in Ghent.")
    # A slot rewritten from another source: `source` says mail:2, provenance names both.
    by_provenance = remember(client, tenant, "Phone ends in 42.", subject="user:b",
                             key="phone", source="mail:1")
    response = client.post("/v1/memories", json={"subject": "user:b", "text": "Phone ends 43.",
                                                  "key": "phone", "source": "mail:2"},
                           headers=tenant["app"])
    assert response.json()["id"] == by_provenance
    by_ids = remember(client, tenant, "Reads Dante.", subject="user:c")
    free = remember(client, tenant, "Swims.", subject="user:d")
    foreign = remember(client, other_tenant, "Lives in Ghent.", subject=SUBJECT)
    subject_hold = hold(client, tenant, subject=SUBJECT)["id"]
    source_hold = hold(client, tenant, source="mail:1")["id"]
    ids_hold = hold(client, tenant, memory_ids=[by_ids, by_subject])["id"]
    released = hold(client, tenant, subject="user:d")["id"]
    release(client, tenant, released)

    tenant_id = uuid.UUID(tenant["id"])
    asked = [uuid.UUID(i) for i in (by_subject, by_provenance, by_ids, free, foreign)]
    with uow.unit_of_work(tenant_id) as session:
        covered = holds.covering(session, tenant_id=tenant_id, memory_ids=asked)
    assert {str(k): str(v) for k, v in covered.items()} == {
        by_subject: subject_hold, by_provenance: source_hold, by_ids: ids_hold}
