"""A single forget cascades over provenance: derived memories, artifacts, webhook events."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from app.core import uow
from app.core.models import utcnow
from app.forgetting.retention import retention
from tests.webhooks.helpers import deliver_pending, receiver, register, remember, webhook_settings

SUBJECT = "user:cascade"


@pytest.fixture
def private_ok() -> Iterator[None]:
    with webhook_settings(allow_private="true", retry_seconds="[1]"):
        yield


def _chain(client: Any, tenant: dict[str, Any]) -> tuple[str, str, str, str]:
    """A ← B ← C (memories, C in another subject) and artifact X ← C."""
    a = remember(client, tenant, "Lives on a narrowboat on the Grand Union canal.", SUBJECT)
    b = remember(client, tenant, "Often travels by boat.", SUBJECT, derived_from=[a])
    c = remember(client, tenant, "Household travels by water.", "household:9", derived_from=[b])
    x = client.post("/v1/artifacts", json={"kind": "summary", "ref": "crm:row:4",
                                           "derived_from": [c]}, headers=tenant["app"])
    assert x.status_code == 201, x.text
    return a, b, c, x.json()["id"]


def _memory(client: Any, tenant: dict[str, Any], memory_id: str) -> dict[str, Any] | None:
    response = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"])
    if response.status_code == 404:
        return None
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _artifact(client: Any, tenant: dict[str, Any], artifact_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/artifacts/{artifact_id}", headers=tenant["app"])
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_forget_makes_derived_memories_suspect_and_asks_artifacts_to_erase(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    with receiver() as hooks:
        hook = register(client, tenant, hooks.url,
                        ["memory.forgotten", "artifact.erase_requested"])
        a, b, c, x = _chain(client, tenant)
        assert client.delete(f"/v1/memories/{a}", headers=tenant["app"]).status_code == 204

        derived = _memory(client, tenant, b)
        assert derived is not None
        assert derived["state"] == "suspect" and derived["flags"] == ["source-forgotten"]
        grandchild = _memory(client, tenant, c)
        assert grandchild is not None and grandchild["state"] == "active"
        requested = _artifact(client, tenant, x)
        assert requested["status"] == "erase_requested"
        assert requested["erase_requested_at"] is not None

        assert sorted(deliver_pending(owner_conn)) == ["delivered", "delivered"]
        received = hooks.wait_for(2)
        events = {event["type"]: event["data"] for event in hooks.verified(hook["secret"])}
    assert events["memory.forgotten"]["memory_id"] == a
    assert events["artifact.erase_requested"] == {
        "artifact_id": x, "kind": "summary", "ref": "crm:row:4", "derived_from": [c],
        "requested_at": events["artifact.erase_requested"]["requested_at"]}
    for delivery in received:
        for word in (b"narrowboat", b"Grand Union", b"boat", b"water", SUBJECT.encode(),
                     b"household:9"):
            assert word not in delivery.body
    # The 2xx answer acknowledged the erasure.
    acknowledged = _artifact(client, tenant, x)
    assert acknowledged["status"] == "erased" and acknowledged["acknowledged_at"] is not None
    trail = client.get(f"/v1/audit?target_id={x}", headers=tenant["compliance"]).json()["data"]
    assert [(e["action"], e["actor"]) for e in trail][1:] == [
        ("artifact.erase_requested", trail[1]["actor"]),
        ("artifact.erased", "system:webhooks")]
    assert trail[1]["actor"].startswith("key:")


def test_the_product_acknowledges_an_erasure_itself(
    client: Any, tenant: dict[str, Any]
) -> None:
    a, _, _, x = _chain(client, tenant)
    assert client.post(f"/v1/memories/{a}/forget", json={}, headers=tenant["app"]).json()[
        "forgotten"]
    assert _artifact(client, tenant, x)["status"] == "erase_requested"
    done = client.post(f"/v1/artifacts/{x}/erased", headers=tenant["app"])
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "erased" and done.json()["acknowledged_at"] is not None
    again = client.post(f"/v1/artifacts/{x}/erased", headers=tenant["app"])
    assert again.status_code == 200 and again.json() == done.json()
    listed = client.get("/v1/artifacts?status=erased", headers=tenant["app"]).json()["data"]
    assert [artifact["id"] for artifact in listed] == [x]


def test_withdrawing_an_artifact_whose_erasure_was_asked_counts_as_erased(
    client: Any, tenant: dict[str, Any]
) -> None:
    a, _, _, x = _chain(client, tenant)
    assert client.delete(f"/v1/memories/{a}", headers=tenant["app"]).status_code == 204
    assert client.delete(f"/v1/artifacts/{x}", headers=tenant["app"]).status_code == 204
    assert _artifact(client, tenant, x)["status"] == "erased"


def test_with_cascade_forget_derived_memories_are_forgotten_transitively(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    changed = client.patch("/v1/settings", json={"forget": {"cascade": "forget"}},
                           headers=tenant["compliance"])
    assert changed.status_code == 200 and changed.json()["forget"] == {"cascade": "forget"}
    with receiver() as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        a, b, c, x = _chain(client, tenant)
        assert client.delete(f"/v1/memories/{a}", headers=tenant["app"]).status_code == 204
        assert _memory(client, tenant, b) is None and _memory(client, tenant, c) is None
        assert _artifact(client, tenant, x)["status"] == "erase_requested"
        deliver_pending(owner_conn)
        hooks.wait_for(3)
        forgotten = sorted(e["data"]["memory_id"] for e in hooks.verified(hook["secret"]))
    assert forgotten == sorted([a, b, c])
    kept = owner_conn.execute(
        "SELECT count(*) FROM memory_version WHERE memory_id = ANY(%s)"
        " AND (sealed_text <> '' OR search <> '')", ([a, b, c],)).fetchone()
    assert kept == (0,)
    moves = owner_conn.execute(
        "SELECT to_state, reason FROM audit_event WHERE target_id = %s ORDER BY seq",
        (c,)).fetchall()
    assert moves[-1] == ("forgotten", "source-forgotten")


def test_with_cascade_forget_a_held_derived_memory_keeps_its_content(
    client: Any, tenant: dict[str, Any], private_ok: None
) -> None:
    changed = client.patch("/v1/settings", json={"forget": {"cascade": "forget"}},
                           headers=tenant["compliance"])
    assert changed.status_code == 200, changed.text
    a, b, c, _ = _chain(client, tenant)
    hold = client.post("/v1/legal-holds", json={"memory_ids": [b], "reason": "litigation"},
                       headers=tenant["compliance"])
    assert hold.status_code == 201, hold.text

    # The forget itself succeeds: holds win over the cascade, not over the forget asked for.
    assert client.delete(f"/v1/memories/{a}", headers=tenant["app"]).status_code == 204
    assert _memory(client, tenant, a) is None
    kept = _memory(client, tenant, b)
    assert kept is not None and kept["text"] == "Often travels by boat."
    assert kept["state"] == "suspect" and kept["flags"] == ["source-forgotten"]
    # What derives further, unheld, goes as the cascade says: it derives from A too.
    assert _memory(client, tenant, c) is None


def test_a_cycle_of_derivations_ends(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.patch("/v1/settings", json={"forget": {"cascade": "forget"}},
                 headers=tenant["compliance"])
    a = remember(client, tenant, "Prefers tea to coffee.", SUBJECT)
    b = remember(client, tenant, "Drinks tea every morning.", SUBJECT, derived_from=[a])
    # b ← a and a ← b: a cycle no write can make, but provenance may hold one.
    owner_conn.execute(
        "INSERT INTO provenance_edge (id, tenant_id, child_kind, child_id, parent_kind, "
        "parent_ref) VALUES (%s, %s, 'memory', %s, 'memory', %s)",
        (uuid.uuid4(), tenant["id"], a, b))
    assert client.delete(f"/v1/memories/{a}", headers=tenant["app"]).status_code == 204
    assert _memory(client, tenant, a) is None and _memory(client, tenant, b) is None


def test_forget_by_description_and_retention_cascade_too(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    about = remember(client, tenant, "I collect sneakers.", SUBJECT)
    from_about = remember(client, tenant, "Buys shoes often.", SUBJECT, derived_from=[about])
    answer = client.post("/v1/forget", headers=tenant["app"],
                         json={"subject": SUBJECT, "about": "that I collect sneakers"}).json()
    assert answer["forgotten"] == [about]
    suspect = _memory(client, tenant, from_about)
    assert suspect is not None and suspect["flags"] == ["source-forgotten"]

    old = remember(client, tenant, "Works night shifts at the bakery.", SUBJECT)
    from_old = remember(client, tenant, "Sleeps during the day.", SUBJECT, derived_from=[old])
    client.post(f"/v1/memories/{old}/reject", headers=tenant["app"])
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        retention(session, tenant_id=tenant_id, now=utcnow() + timedelta(days=31))
    with uow.unit_of_work(tenant_id) as session:
        moved = retention(session, tenant_id=tenant_id, now=utcnow() + timedelta(days=62))
    assert moved["forgotten"] == [old]
    derived = _memory(client, tenant, from_old)
    assert derived is not None and derived["state"] == "suspect"
    assert derived["flags"] == ["source-forgotten"]
    actors = owner_conn.execute(
        "SELECT actor FROM audit_event WHERE target_id = %s AND to_state = 'suspect'",
        (from_old,)).fetchall()
    assert actors == [("system:retention",)]


def test_a_memory_derived_from_two_forgotten_sources_is_flagged_once(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = remember(client, tenant, "Has a season ticket.", SUBJECT)
    second = remember(client, tenant, "Goes to home games.", SUBJECT)
    derived = remember(client, tenant, "Likes football.", SUBJECT, derived_from=[first, second])
    assert client.delete(f"/v1/memories/{first}", headers=tenant["app"]).status_code == 204
    shown = _memory(client, tenant, derived)
    assert shown is not None and shown["revision"] == 2
    assert client.delete(f"/v1/memories/{second}", headers=tenant["app"]).status_code == 204
    again = _memory(client, tenant, derived)
    assert again is not None and again["revision"] == 2, "one flag, one move"


def test_retractions_keep_about_only_while_the_setting_is_on(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    kept = remember(client, tenant, "Was born in Leeds.", SUBJECT)
    client.post(f"/v1/memories/{kept}/forget", json={"about": "my birthplace"},
                headers=tenant["app"])
    settings = client.patch("/v1/settings", json={"retractions": {"keep_about": False}},
                            headers=tenant["compliance"])
    assert settings.status_code == 200 and settings.json()["retractions"] == {"keep_about": False}
    dropped = remember(client, tenant, "Studied in York.", SUBJECT)
    client.post(f"/v1/memories/{dropped}/forget", json={"about": "where I studied"},
                headers=tenant["app"])
    rows = owner_conn.execute(
        "SELECT sealed_about IS NOT NULL, memory_count FROM retraction ORDER BY created_at"
    ).fetchall()
    assert rows == [(True, 1), (False, 1)]
    recalled = client.post("/v1/recall", json={"subject": SUBJECT, "query": "York"},
                           headers=tenant["app"]).json()
    assert sorted(r["about"] or "" for r in recalled["retractions"]) == ["", "my birthplace"]


def test_the_new_settings_default_to_flag_and_keep_about(
    client: Any, tenant: dict[str, Any]
) -> None:
    body = client.get("/v1/settings", headers=tenant["app"]).json()
    assert body["forget"] == {"cascade": "flag"} and body["retractions"] == {"keep_about": True}
    bad = client.patch("/v1/settings", json={"forget": {"cascade": "delete"}},
                       headers=tenant["compliance"])
    assert bad.status_code == 422
