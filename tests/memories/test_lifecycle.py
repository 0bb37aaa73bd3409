"""The one new-revision step: every change moves the revision by one; what gets audited."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.core import uow
from app.memories import lifecycle, store
from app.memories.errors import IllegalTransition
from app.memories.models import MemoryState
from tests.memories.helpers import created, remember


def _events(owner_conn: Any, memory_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [(row[0], row[1]) for row in owner_conn.execute(
        "SELECT action, details FROM audit_event WHERE target_id = %s ORDER BY seq",
        (memory_id,))]


def _edit(client: Any, tenant: dict[str, Any], memory: dict[str, Any], revision: int,
          path: str = "", method: str = "PATCH", **body: Any) -> dict[str, Any]:
    response = client.request(method, f"/v1/memories/{memory['id']}{path}", json=body,
                              headers={**tenant["app"], "If-Match": f'"{revision}"'})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_an_application_s_edits_move_the_revision_and_are_audited_with_their_version(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = created(client, tenant["app"], text="I live in Porto.", key="home")
    updated = _edit(client, tenant, memory, 1, text="I live in Lisbon.")
    reverted = _edit(client, tenant, memory, 2, "/revert", "POST", seq=1)
    restating = remember(client, tenant["app"], text="I live in Faro.", key="home")
    assert restating.status_code == 200, restating.text
    restated = restating.json()
    assert [updated["revision"], reverted["revision"]] == [2, 3]
    assert (restated["id"], restated["revision"]) == (memory["id"], 4)
    assert [(action, details["revision"], details["version"])
            for action, details in _events(owner_conn, memory["id"])] == [
        ("memory.created", 1, 1), ("memory.corrected", 2, 2), ("memory.reverted", 3, 1),
        ("memory.corrected", 4, 3)]


def test_a_transition_and_a_strike_record_the_revision_they_made(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = created(client, tenant["app"], text="I live in Porto. I collect sneakers.")
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        row = store.load(session, tenant_id=uuid.UUID(tenant["id"]),
                         memory_id=uuid.UUID(memory["id"]), for_update=True)
        lifecycle.transition(session, row, MemoryState.suspect, reason="test",
                               actor="system:test")
        lifecycle.destroy_content(
            session, row, reason="test", actor="system:test",
            strike=lifecycle.Strike(text="I live in Porto.", embedding=None, sentences=1,
                                      delete=True),
        )
    [version_id] = owner_conn.execute(
        "SELECT id::text FROM memory_version WHERE memory_id = %s AND seq = 2",
        (memory["id"],)).fetchone()
    assert _events(owner_conn, memory["id"])[1:] == [
        ("memory.transition", {"revision": 2, "superseded_by": None}),
        ("memory.struck", {"revision": 3, "sentences": 1, "redacted_versions": 0,
                           "version": 2, "version_id": version_id}),
    ]
    read = client.get(f"/v1/memories/{memory['id']}", headers=tenant["app"]).json()
    assert (read["text"], read["revision"], read["state"]) == ("I live in Porto.", 3, "suspect")


def test_confirming_validates_at_the_revision_s_time(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = created(client, tenant["app"], text="I live in Porto.")
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        row = store.load(session, tenant_id=tenant_id, memory_id=uuid.UUID(memory["id"]),
                         for_update=True)
        lifecycle.confirm(session, row, actor="system:test")
        assert (row.revision, row.last_validated_at) == (2, row.updated_at)
        lifecycle.transition(session, row, MemoryState.deprecated, reason="test",
                               actor="system:test")
        with pytest.raises(IllegalTransition):
            lifecycle.confirm(session, row, actor="system:test")
