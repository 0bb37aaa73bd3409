"""A memory's lineage: its audit trail and the memory that contradicted or superseded it."""

from __future__ import annotations

import uuid
from typing import Any

from app.core import uow
from app.memories.lifecycle import transition
from app.memories.models import Memory, MemoryState
from tests.memories.helpers import created, remember

TRAIL_FIELDS = {"seq", "actor", "action", "from_state", "to_state", "reason", "details",
                "created_at"}


def _lineage(client: Any, tenant: dict[str, Any], memory_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/memories/{memory_id}/lineage", headers=tenant["app"])
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _app_actor(owner_conn: Any, tenant: dict[str, Any]) -> str:
    [row] = owner_conn.execute(
        "SELECT id FROM api_key WHERE tenant_id = %s AND role = 'app'", (tenant["id"],))
    return f"key:{row[0]}"


def test_lineage_lists_the_audit_trail_and_names_the_contradicting_memory(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    old = created(client, tenant["app"], text="My phone number is 555-1234.")
    new = created(client, tenant["app"], text="My phone number is 555-9876.")
    assert new["effects"]["suspected"] == [old["id"]]
    lineage = _lineage(client, tenant, old["id"])
    assert lineage["contradicted_by"] == new["id"] and lineage["superseded_by"] is None
    created_event, event = lineage["audit_events"]
    assert created_event["action"] == "memory.created"
    assert set(event) == TRAIL_FIELDS, "content-free: no text, no chain hashes"
    assert (event["actor"], event["action"], event["from_state"], event["to_state"]) == (
        _app_actor(owner_conn, tenant), "memory.transition", "active", "suspect")
    assert event["reason"].startswith(f"contradicted by {new['id']}")
    assert event["details"]["contradicted_by"] == new["id"]
    # The same events as the audit trail holds for this memory.
    audit = client.get(f"/v1/audit?target_id={old['id']}", headers=tenant["compliance"]).json()
    assert [e["seq"] for e in audit["data"]] == [e["seq"] for e in lineage["audit_events"]]
    fresh = _lineage(client, tenant, new["id"])
    assert fresh["contradicted_by"] is None
    assert [e["action"] for e in fresh["audit_events"]] == ["memory.created"]


def test_an_already_suspect_memory_contradicted_still_names_who_contradicted_it(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = created(client, tenant["app"], text="My phone number is 555-1234.")
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        row = session.get(Memory, uuid.UUID(old["id"]))
        assert row is not None
        transition(session, row, MemoryState.suspect, reason="test", actor="system:test")
    new = created(client, tenant["app"], text="My phone number is 555-9876.")
    assert new["effects"]["suspected"] == [old["id"]]
    lineage = _lineage(client, tenant, old["id"])
    assert lineage["contradicted_by"] == new["id"]
    assert [(e["action"], e["to_state"]) for e in lineage["audit_events"]] == [
        ("memory.created", None), ("memory.transition", "suspect"), ("memory.flagged", None)]
    flagged = lineage["audit_events"][2]
    assert flagged["details"] == {"contradicted_by": new["id"], "flag": "contradicted",
                                  "revision": 3}


def test_lineage_of_a_superseded_memory_names_its_successor_and_the_move(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = created(client, tenant["app"], text="Likes jazz.")
    new = remember(client, tenant["app"], text="Dislikes music.", supersedes=[old["id"]])
    assert new.status_code == 201, new.text
    lineage = _lineage(client, tenant, old["id"])
    assert lineage["superseded_by"] == new.json()["id"] and lineage["contradicted_by"] is None
    _created, event = lineage["audit_events"]
    assert (event["action"], event["from_state"], event["to_state"], event["reason"]) == (
        "memory.transition", "active", "deprecated", "superseded")
    assert event["details"]["superseded_by"] == new.json()["id"]
