"""confirm / reject / quarantine / release: the ladder moved on request, audited."""

from __future__ import annotations

import uuid
from typing import Any

from app.core import uow
from app.memories.lifecycle import transition
from app.memories.models import Memory, MemoryState


def _remember(client: Any, tenant: dict[str, Any], text: str, **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/memories", json={"subject": "u:1", "text": text, **extra},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def _post(client: Any, headers: dict[str, str], memory_id: str, action: str,
          if_match: str | None = None) -> Any:
    extra = {"If-Match": if_match} if if_match else {}
    return client.post(f"/v1/memories/{memory_id}/{action}", headers={**headers, **extra})


def test_confirm_settles_a_suspect_memory(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant, "My manager is Priya.")
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        row = session.get(Memory, uuid.UUID(memory["id"]))
        assert row is not None
        row.flags = ["stale"]
        transition(session, row, MemoryState.suspect, reason="test", actor="system:test")
    stale = _post(client, tenant["app"], memory["id"], "confirm", if_match='"1"')
    assert stale.status_code == 412
    confirmed = _post(client, tenant["app"], memory["id"], "confirm", if_match='"2"')
    assert confirmed.status_code == 200, confirmed.text
    body = confirmed.json()
    assert body["state"] == "active" and body["flags"] == [] and body["revision"] == 3
    assert body["last_validated_at"] > memory["last_validated_at"]
    assert confirmed.headers["ETag"] == '"3"'
    again = _post(client, tenant["app"], memory["id"], "confirm")
    assert again.json()["revision"] == 4 and again.json()["state"] == "active"


def test_reject_deprecates_and_cannot_be_confirmed_after(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = _remember(client, tenant, "The wifi password is hunter2.")
    rejected = _post(client, tenant["app"], memory["id"], "reject")
    assert rejected.status_code == 200 and rejected.json()["state"] == "deprecated"
    assert _post(client, tenant["app"], memory["id"], "confirm").status_code == 409
    recalled = client.post("/v1/recall", json={"subject": "u:1", "query": "wifi password"},
                           headers=tenant["app"]).json()
    assert recalled["results"] == []


def test_quarantine_and_release_are_compliance_only_and_audited(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = _remember(client, tenant, "I am training for the Lisbon marathon.")
    assert _post(client, tenant["app"], memory["id"], "quarantine").status_code == 403
    held = _post(client, tenant["compliance"], memory["id"], "quarantine")
    assert held.status_code == 200 and held.json()["state"] == "quarantined"
    query = {"subject": "u:1", "query": "marathon training"}
    assert client.post("/v1/recall", json=query, headers=tenant["app"]).json()["results"] == []
    assert _post(client, tenant["app"], memory["id"], "release").status_code == 403
    released = _post(client, tenant["compliance"], memory["id"], "release")
    assert released.status_code == 200 and released.json()["state"] == "active"
    results = client.post("/v1/recall", json=query, headers=tenant["app"]).json()["results"]
    assert [r["memory"]["id"] for r in results] == [memory["id"]]
    trail = client.get(f"/v1/audit?target_id={memory['id']}",
                       headers=tenant["compliance"]).json()["data"]
    assert [(e["action"], e["from_state"], e["to_state"]) for e in trail] == [
        ("memory.created", None, None), ("memory.transition", "active", "quarantined"),
        ("memory.transition", "quarantined", "active")]


def test_release_refuses_when_the_slot_is_taken(client: Any, tenant: dict[str, Any]) -> None:
    old = _remember(client, tenant, "I live in Berlin.", key="home")
    _post(client, tenant["compliance"], old["id"], "quarantine")
    _remember(client, tenant, "I live in Lisbon.", key="home")
    refused = _post(client, tenant["compliance"], old["id"], "release")
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("/slot-taken")


def test_forgotten_and_foreign_memories_are_404(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    memory = _remember(client, tenant, "Gate code 4411.")
    assert _post(client, other_tenant["app"], memory["id"], "confirm").status_code == 404
    client.delete(f"/v1/memories/{memory['id']}", headers=tenant["app"])
    for action, headers in (("confirm", tenant["app"]), ("reject", tenant["app"]),
                            ("release", tenant["compliance"])):
        assert _post(client, headers, memory["id"], action).status_code == 404
