"""Audit rows stay content-free: text-sized values are refused, not stored."""

from __future__ import annotations

import json
import math
import uuid
from typing import Any

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy.engine import Engine

from app.audit import service as audit
from app.core import uow
from tests.audit.helpers import ACTOR, append


@pytest.mark.parametrize("fields", [
    {"reason": "x" * 501},
    {"reason": "bad\x00byte"},
    {"details": {"note": "x" * 201}},
    {"details": {"ids": ["ok", "y" * 201]}},
    {"details": {"deep": {"deeper": {"text": "z" * 201}}}},
    {"details": {"k" * 65: 1}},
    {"details": {"ratio": math.nan}},
    {"details": {"ratio": math.inf}},
    {"details": {"when": object()}},
    {"details": {"a": {"b": {"c": {"d": {"e": 1}}}}}},
    {"details": {"many": list(range(101))}},
    {"details": ["not", "an", "object"]},
    {"actor": "Alice from accounting"},
    {"actor": "key:not-a-uuid"},
    {"action": "Memory transitioned because the user said so"},
    {"target_kind": "memory text"},
    {"to_state": "x" * 21},
    {"target_id": "t" * 256},
])
def test_values_that_could_carry_content_are_refused(
    tenant: dict[str, Any], owner_conn: Any, fields: dict[str, Any]
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    arguments: dict[str, Any] = {"actor": ACTOR, "action": "memory.transition",
                                 "target_kind": "memory", **fields}
    with pytest.raises(ValueError), uow.unit_of_work(tenant_id) as session:
        audit.record(session, tenant_id=tenant_id, **arguments)
    assert owner_conn.execute("SELECT count(*) FROM audit_event").fetchone()[0] == 0


def test_values_at_the_caps_are_kept(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], reason="r" * 500, details={"id": "i" * 200, "k" * 64: [1, 2.5, None]})
    reason, details = owner_conn.execute("SELECT reason, details FROM audit_event").fetchone()
    assert reason == "r" * 500
    assert details == {"id": "i" * 200, "k" * 64: [1, 2.5, None]}


def test_actor_forms(tenant: dict[str, Any]) -> None:
    key_id = uuid.uuid4()
    principal: Any = type("P", (), {"key_id": key_id})()
    assert audit.actor_for(principal) == f"key:{key_id}"
    for actor in (audit.actor_for(principal), audit.system_actor("retention"), audit.ADMIN):
        append(tenant["id"], actor=actor)


def test_uuid_targets_and_detail_ids_are_stored_as_strings(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id, other_id = uuid.uuid4(), uuid.uuid4()
    append(tenant["id"], target_id=memory_id, details={"superseded_by": other_id})
    target, details = owner_conn.execute("SELECT target_id, details FROM audit_event").fetchone()
    assert (target, details) == (str(memory_id), {"superseded_by": str(other_id)})


# -- every change to a memory's content is an event: who, which version, never the text -------

CONTENT = {"memory.created", "memory.corrected", "memory.reverted", "memory.struck"}
SUBJECT = "user:content-audit"
WORDS = ("porto", "lisbon", "faro", "braga", "sneaker", "content-audit", "chat:42")


def _key_actor(owner_conn: Any, tenant: dict[str, Any], role: str = "app") -> str:
    [row] = owner_conn.execute(
        "SELECT id FROM api_key WHERE tenant_id = %s AND role = %s", (tenant["id"], role))
    return f"key:{row[0]}"


def _trail(client: Any, tenant: dict[str, Any], memory_id: str) -> list[dict[str, Any]]:
    response = client.get("/v1/audit", params={"target_id": memory_id, "limit": 200},
                          headers=tenant["compliance"])
    assert response.status_code == 200, response.text
    return [event for event in response.json()["data"] if event["action"] in CONTENT]


def _ok(response: Any, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


def _edit(client: Any, tenant: dict[str, Any], memory_id: str, revision: int, path: str = "",
          method: str = "PATCH", **body: Any) -> dict[str, Any]:
    return _ok(client.request(method, f"/v1/memories/{memory_id}{path}", json=body,
                              headers={**tenant["app"], "If-Match": f'"{revision}"'}))


def _text_free(events: list[dict[str, Any]]) -> None:
    dumped = json.dumps(events).lower()
    for word in WORDS:
        assert word not in dumped, word


def test_every_version_of_a_memory_names_who_made_it_and_never_its_text(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    write = {"subject": SUBJECT, "key": "home", "source": "chat:42"}
    memory = _ok(client.post("/v1/memories", json={
        **write, "text": "I live in Porto. I collect sneakers."}, headers=tenant["app"]), 201)
    memory_id = memory["id"]
    _edit(client, tenant, memory_id, 1, text="I live in Lisbon. I collect sneakers.")
    _edit(client, tenant, memory_id, 2, text="I live in Faro. I collect sneakers.")
    slot = _ok(client.post("/v1/memories", json={
        **write, "text": "I live in Braga. I collect sneakers."}, headers=tenant["app"]))
    assert (slot["id"], slot["revision"]) == (memory_id, 4)
    _edit(client, tenant, memory_id, 4, "/revert", "POST", seq=1)
    _ok(client.post("/v1/forget", json={"subject": SUBJECT, "about": "that I collect sneakers"},
                    headers=tenant["app"]))

    events = _trail(client, tenant, memory_id)
    versions = {v["seq"]: v["id"] for v in _ok(client.get(
        f"/v1/memories/{memory_id}/versions", headers=tenant["app"]))["data"]}
    app = _key_actor(owner_conn, tenant)
    assert [(e["action"], e["actor"], e["details"]["revision"], e["details"]["version"])
            for e in events] == [
        ("memory.created", app, 1, 1),
        ("memory.corrected", app, 2, 2),
        ("memory.corrected", app, 3, 3),
        ("memory.corrected", app, 4, 4),
        ("memory.reverted", app, 5, 1),
        ("memory.struck", app, 6, 5),
    ]
    assert [e["details"]["version_id"] for e in events] == [
        versions[e["details"]["version"]] for e in events]
    assert [e["details"].get("via") for e in events[1:4]] == ["patch", "patch", "key"]
    assert events[1]["details"]["fields"] == ["text"]
    _text_free(_ok(client.get("/v1/audit", params={"limit": 200},
                              headers=tenant["compliance"]))["data"])
    assert _ok(client.get("/v1/audit/verify", headers=tenant["compliance"]))["ok"] is True


def test_a_correction_without_new_text_names_the_current_version(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = _ok(client.post("/v1/memories", json={"subject": SUBJECT, "text": "Likes tea."},
                             headers=tenant["app"]), 201)
    _edit(client, tenant, memory["id"], 1, metadata={"topic": "drinks"})
    corrected = _trail(client, tenant, memory["id"])[-1]
    assert corrected["action"] == "memory.corrected"
    assert (corrected["details"]["version"], corrected["details"]["fields"]) == (1, ["metadata"])


def test_a_batch_appends_one_created_event_per_item_in_one_statement(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    items = [{"subject": SUBJECT, "text": f"Owns {n} bicycles."} for n in range(1, 4)]
    items.append({"subject": SUBJECT, "text": "Refused.", "supersedes": [str(uuid.uuid4())]})
    inserts: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO AUDIT_EVENT"):
            inserts.append(statement)

    sa_event.listen(Engine, "before_cursor_execute", count)
    try:
        results = _ok(client.post("/v1/memories/batch", json={"memories": items},
                                  headers=tenant["app"]))["results"]
    finally:
        sa_event.remove(Engine, "before_cursor_execute", count)
    assert [r["status"] for r in results] == [201, 201, 201, 422]
    created = [r["memory"]["id"] for r in results[:3]]
    rows = owner_conn.execute(
        "SELECT target_id, actor, details->>'version' FROM audit_event "
        "WHERE action = 'memory.created' ORDER BY seq").fetchall()
    assert rows == [(memory_id, _key_actor(owner_conn, tenant), "1") for memory_id in created]
    assert len(inserts) == 1, "the batch's events go in one statement"
    assert _ok(client.get("/v1/audit/verify", headers=tenant["compliance"]))["ok"] is True


def test_ingested_memories_are_created_by_the_key_that_sent_them(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    from app.ingestion import tasks

    accepted = _ok(client.post("/v1/ingest", json={"subject": SUBJECT, "memories": [
        {"text": "Keeps bees."}, {"text": "Plays the oboe."}]},
        headers={**tenant["app"], "Idempotency-Key": "ingest-1"}), 202)
    tasks.apply_ingestion(accepted["operation_id"], tenant["id"])
    tasks.apply_ingestion(accepted["operation_id"], tenant["id"])  # a redelivery adds none
    rows = owner_conn.execute(
        "SELECT actor FROM audit_event WHERE action = 'memory.created'").fetchall()
    assert rows == [(_key_actor(owner_conn, tenant),)] * 2
