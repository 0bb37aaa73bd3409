"""`POST /v1/sessions/{session}/close` and `POST /v1/memories/{id}/promote`: an agent run's
working memories are evicted through the one forget path, unless promoted or held."""

from __future__ import annotations

from typing import Any

from tests import sealed
from tests.holds.helpers import hold, release
from tests.memories.helpers import created

RUN = "run:7"


def _working(client: Any, tenant: dict[str, Any], text: str, **extra: Any) -> dict[str, Any]:
    extra.setdefault("session", RUN)
    return created(client, tenant["app"], text=text, volatility="working", **extra)


def _close(client: Any, tenant: dict[str, Any], run: str = RUN, **headers: str) -> Any:
    return client.post(f"/v1/sessions/{run}/close", headers={**tenant["app"], **headers})


def test_close_forgets_working_memories_and_keeps_the_rest(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    scratch = _working(client, tenant, "The user is comparing two blue backpacks.",
                       source="conversation:81")
    promoted = _working(client, tenant, "The user prefers backpacks with a laptop sleeve.")
    durable = created(client, tenant["app"], text="The user lives in Porto.", session=RUN)
    other_run = _working(client, tenant, "The user asked about train times.", session="run:8")
    assert scratch["session"] == RUN and scratch["volatility"] == "working"

    answer = client.post(f"/v1/memories/{promoted['id']}/promote",
                         json={"volatility": "preferential"}, headers=tenant["app"])
    assert answer.status_code == 200, answer.text
    assert answer.json()["volatility"] == "preferential"
    assert answer.json()["revision"] == promoted["revision"] + 1
    assert answer.headers["ETag"] == f'"{promoted["revision"] + 1}"'

    closed = _close(client, tenant)
    assert closed.status_code == 200, closed.text
    body = closed.json()
    assert body["session"] == RUN
    assert body["evicted"] == [scratch["id"]]
    assert sorted(body["kept"]) == sorted([promoted["id"], durable["id"]])
    assert body["held"] == []

    assert client.get(f"/v1/memories/{scratch['id']}", headers=tenant["app"]).status_code == 404
    for kept in (promoted, durable, other_run):
        assert client.get(f"/v1/memories/{kept['id']}", headers=tenant["app"]).status_code == 200
    # The one forget path: tombstone with every version's text purged, audited.
    assert sealed.texts(owner_conn, "m.id = %s", (scratch["id"],)) == [""]
    trail = owner_conn.execute(
        "SELECT to_state, reason FROM audit_event WHERE target_id = %s AND action = "
        "'memory.transition'", (scratch["id"],)).fetchall()
    assert trail == [("forgotten", "session closed")]
    # The source was not excluded: the same source may bring the fact back.
    again = client.post("/v1/memories", headers=tenant["app"], json={
        "subject": "user:42", "text": "The user is comparing two blue backpacks.",
        "source": "conversation:81"})
    assert again.status_code == 201, again.text
    listed = client.get("/v1/sources/exclusions", headers=tenant["app"]).json()["data"]
    assert listed == []


def test_closing_again_evicts_only_what_was_written_since(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = _working(client, tenant, "The user opened the settings page.")
    assert _close(client, tenant).json()["evicted"] == [first["id"]]
    assert _close(client, tenant).json() == {"session": RUN, "evicted": [], "kept": [],
                                             "held": []}
    later = _working(client, tenant, "The user opened the billing page.")
    assert _close(client, tenant).json()["evicted"] == [later["id"]]


def test_a_held_working_memory_is_kept_and_reported(
    client: Any, tenant: dict[str, Any]
) -> None:
    held = _working(client, tenant, "The user mentioned a dispute with the landlord.")
    loose = _working(client, tenant, "The user is drafting an email.")
    placed = hold(client, tenant, memory_ids=[held["id"]])

    body = _close(client, tenant).json()
    assert body["evicted"] == [loose["id"]]
    assert body["kept"] == [held["id"]]
    assert body["held"] == [{"memory_id": held["id"], "hold_id": placed["id"]}]
    assert client.get(f"/v1/memories/{held['id']}", headers=tenant["app"]).status_code == 200

    release(client, tenant, placed["id"])
    assert _close(client, tenant).json()["evicted"] == [held["id"]]


def test_close_with_an_idempotency_key_replays_its_first_answer(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = _working(client, tenant, "The user is on step two of checkout.")
    answer = _close(client, tenant, **{"Idempotency-Key": "close-run-7"})
    later = _working(client, tenant, "The user is on step three of checkout.")
    replay = _close(client, tenant, **{"Idempotency-Key": "close-run-7"})
    assert replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == answer.json() and answer.json()["evicted"] == [first["id"]]
    # The replay changed nothing: the memory written since is still there.
    assert client.get(f"/v1/memories/{later['id']}", headers=tenant["app"]).status_code == 200


def test_sessions_are_tenant_scoped(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    mine = _working(client, tenant, "The user is reading chapter four.")
    assert _close(client, other_tenant).json()["evicted"] == []
    assert client.get(f"/v1/memories/{mine['id']}", headers=tenant["app"]).status_code == 200


def test_promote_refuses_what_is_not_a_durable_promotion(
    client: Any, tenant: dict[str, Any]
) -> None:
    scratch = _working(client, tenant, "The user is choosing a seat.")
    durable = created(client, tenant["app"], text="The user is vegetarian.")
    to_working = client.post(f"/v1/memories/{scratch['id']}/promote",
                             json={"volatility": "working"}, headers=tenant["app"])
    assert to_working.status_code == 422
    not_working = client.post(f"/v1/memories/{durable['id']}/promote",
                              json={"volatility": "structural"}, headers=tenant["app"])
    assert not_working.status_code == 409
    assert not_working.json()["type"].endswith("/not-working-memory")
    stale = client.post(f"/v1/memories/{scratch['id']}/promote", json={"volatility": "procedural"},
                        headers={**tenant["app"], "If-Match": '"9"'})
    assert stale.status_code == 412
    keyed = {**tenant["app"], "Idempotency-Key": "promote-seat"}
    first = client.post(f"/v1/memories/{scratch['id']}/promote",
                        json={"volatility": "situational"}, headers=keyed)
    replay = client.post(f"/v1/memories/{scratch['id']}/promote",
                         json={"volatility": "situational"}, headers=keyed)
    assert first.status_code == replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    # Promoted to the class it has: no new revision.
    again = client.post(f"/v1/memories/{scratch['id']}/promote",
                        json={"volatility": "situational"}, headers=tenant["app"])
    assert again.json()["revision"] == first.json()["revision"]


def test_the_close_service_is_callable_without_http(client: Any, tenant: dict[str, Any]) -> None:
    import uuid

    from app.core.uow import unit_of_work
    from app.forgetting import sessions

    scratch = _working(client, tenant, "The user is looking at flights to Oslo.")
    tenant_id = uuid.UUID(tenant["id"])
    with unit_of_work(tenant_id) as session:
        closed = sessions.close(session, tenant_id=tenant_id, name=RUN, actor="system:mcp")
    assert closed.evicted == [uuid.UUID(scratch["id"])]
    assert client.get(f"/v1/memories/{scratch['id']}", headers=tenant["app"]).status_code == 404


def test_close_for_one_subject_leaves_another_subjects_part_of_the_run(
    client: Any, tenant: dict[str, Any]
) -> None:
    mine = _working(client, tenant, "The user is comparing two trains.", subject="user:1")
    theirs = _working(client, tenant, "The user is packing for Rome.", subject="user:2")

    closed = client.post(f"/v1/sessions/{RUN}/close", params={"subject": "user:1"},
                         headers=tenant["app"])

    assert closed.status_code == 200, closed.text
    assert closed.json()["evicted"] == [mine["id"]] and closed.json()["kept"] == []
    assert client.get(f"/v1/memories/{theirs['id']}",
                      headers=tenant["app"]).json()["state"] == "active"
    assert client.post(f"/v1/sessions/{RUN}/close", params={"subject": ""},
                       headers=tenant["app"]).status_code == 422
