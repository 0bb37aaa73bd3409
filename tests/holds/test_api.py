"""`/v1/legal-holds`: placing, listing, reading and releasing holds; roles, tenants, audit."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.holds.helpers import SUBJECT, hold, release, remember

PATHS = [("post", "/v1/legal-holds"), ("get", "/v1/legal-holds"),
         ("get", "/v1/legal-holds/{id}"), ("delete", "/v1/legal-holds/{id}")]


def _audit(owner_conn: Any, hold_id: str) -> list[tuple[str, str, str | None]]:
    return [tuple(row) for row in owner_conn.execute(
        "SELECT action, actor, reason FROM audit_event WHERE target_id = %s ORDER BY seq",
        (hold_id,))]


def test_a_subject_hold_is_placed_read_listed_and_released_with_its_record_kept(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    placed = hold(client, tenant, subject=SUBJECT, case_ref="CASE-17")
    assert placed["scope"] == {"subject": SUBJECT}
    assert placed["reason"] == "litigation" and placed["case_ref"] == "CASE-17"
    assert placed["released_at"] is None and placed["created_at"]
    key_id = owner_conn.execute("SELECT id FROM api_key WHERE tenant_id = %s AND role = "
                                "'compliance'", (tenant["id"],)).fetchone()[0]
    assert placed["created_by"] == f"key:{key_id}"

    read = client.get(f"/v1/legal-holds/{placed['id']}", headers=tenant["compliance"]).json()
    assert read == {**placed, "held_count": 0}
    listed = client.get("/v1/legal-holds?active=true", headers=tenant["compliance"]).json()
    assert listed == {"data": [placed], "next_cursor": None}

    release(client, tenant, placed["id"])
    after = client.get(f"/v1/legal-holds/{placed['id']}", headers=tenant["compliance"]).json()
    assert after["released_at"] is not None and after["released_by"] == f"key:{key_id}"
    release(client, tenant, placed["id"])  # again: 204, nothing changes
    again = client.get(f"/v1/legal-holds/{placed['id']}", headers=tenant["compliance"]).json()
    assert again["released_at"] == after["released_at"]
    assert client.get("/v1/legal-holds?active=true",
                      headers=tenant["compliance"]).json()["data"] == []
    assert [h["id"] for h in client.get("/v1/legal-holds?active=false",
                                        headers=tenant["compliance"]).json()["data"]] == [
        placed["id"]]
    assert _audit(owner_conn, placed["id"]) == [
        ("legal_hold.placed", f"key:{key_id}", "litigation"),
        ("legal_hold.released", f"key:{key_id}", None)]
    assert client.get("/v1/audit/verify", headers=tenant["compliance"]).json()["ok"] is True


def test_audit_events_name_no_subject_or_source(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    # Names no hex digest or ID can hold by chance (they are not hex).
    for scope in ({"subject": "user:ada-lovelace"}, {"source": "mailbox:ada@example.com"}):
        release(client, tenant, hold(client, tenant, **scope)["id"])
    events = " ".join(row[0] for row in owner_conn.execute("SELECT e::text FROM audit_event e"))
    assert "lovelace" not in events and "mailbox:" not in events and "example.com" not in events


def test_held_count_covers_the_subject_s_later_memories_and_not_forgotten_ones(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = remember(client, tenant, "Lives in Ghent.")
    remember(client, tenant, "Cycles to work.", subject="user:other")
    placed = hold(client, tenant, subject=SUBJECT)
    remember(client, tenant, "Owns a cargo bike.")
    assert client.get(f"/v1/legal-holds/{placed['id']}",
                      headers=tenant["compliance"]).json()["held_count"] == 2
    release(client, tenant, placed["id"])
    assert client.get(f"/v1/legal-holds/{placed['id']}",
                      headers=tenant["compliance"]).json()["held_count"] == 0
    assert client.delete(f"/v1/memories/{first}", headers=tenant["app"]).status_code == 204


def test_a_source_hold_covers_what_the_source_brought(
    client: Any, tenant: dict[str, Any]
) -> None:
    remember(client, tenant, "Speaks Dutch.", source="conversation:9")
    remember(client, tenant, "Plays chess.", subject="user:b", source="conversation:9")
    remember(client, tenant, "Likes tea.", source="conversation:10")
    placed = hold(client, tenant, source="conversation:9")
    assert placed["scope"] == {"source": "conversation:9"}
    assert client.get(f"/v1/legal-holds/{placed['id']}",
                      headers=tenant["compliance"]).json()["held_count"] == 2


def test_a_memory_ids_hold_names_its_memories(client: Any, tenant: dict[str, Any]) -> None:
    ids = sorted([remember(client, tenant, "Reads Dante."), remember(client, tenant, "Swims.")])
    remember(client, tenant, "Bakes bread.")
    placed = hold(client, tenant, memory_ids=[ids[1], ids[0], ids[1]])
    assert placed["scope"] == {"memory_ids": ids}
    read = client.get(f"/v1/legal-holds/{placed['id']}", headers=tenant["compliance"]).json()
    assert read["held_count"] == 2 and read["scope"] == {"memory_ids": ids}


@pytest.mark.parametrize("body", [
    {"reason": "r"},
    {"reason": "r", "subject": "user:1", "source": "s"},
    {"reason": "r", "subject": "user:1", "memory_ids": [str(uuid.uuid4())]},
    {"reason": "r", "memory_ids": []},
    {"reason": "r", "memory_ids": [str(uuid.uuid4()) for _ in range(1001)]},
    {"subject": "user:1"},
    {"reason": " ", "subject": "user:1"},
    {"reason": "r", "subject": "user:1", "case_ref": 7},
])
def test_exactly_one_scope_and_a_reason_or_422(
    client: Any, tenant: dict[str, Any], body: dict[str, Any], owner_conn: Any
) -> None:
    response = client.post("/v1/legal-holds", json=body, headers=tenant["compliance"])
    assert response.status_code == 422, response.text
    assert owner_conn.execute("SELECT count(*) FROM legal_hold").fetchone()[0] == 0


def test_unknown_forgotten_or_other_tenants_memory_ids_are_422(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    mine = remember(client, tenant, "Grows tomatoes.")
    gone = remember(client, tenant, "Hates olives.")
    client.delete(f"/v1/memories/{gone}", headers=tenant["app"])
    theirs = remember(client, other_tenant, "Keeps goats.")
    for bad in (str(uuid.uuid4()), gone, theirs):
        response = client.post("/v1/legal-holds", json={"reason": "r",
                                                        "memory_ids": [mine, bad]},
                               headers=tenant["compliance"])
        assert response.status_code == 422, response.text
        assert response.json()["unknown"] == [bad]
    assert owner_conn.execute("SELECT count(*) FROM legal_hold").fetchone()[0] == 0


def test_an_app_key_gets_403_everywhere(client: Any, tenant: dict[str, Any]) -> None:
    placed = hold(client, tenant, subject=SUBJECT)
    for method, path in PATHS:
        response = client.request(method.upper(), path.format(id=placed["id"]),
                                  json={"reason": "r", "subject": "x"} if method == "post"
                                  else None, headers=tenant["app"])
        assert response.status_code == 403, (method, path, response.text)
    assert client.get(f"/v1/legal-holds/{placed['id']}",
                      headers=tenant["compliance"]).json()["released_at"] is None


def test_another_tenant_sees_404_and_an_empty_list(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    placed = hold(client, tenant, subject=SUBJECT)
    for method in ("get", "delete"):
        response = client.request(method.upper(), f"/v1/legal-holds/{placed['id']}",
                                  headers=other_tenant["compliance"])
        assert response.status_code == 404, response.text
    assert client.get("/v1/legal-holds", headers=other_tenant["compliance"]).json()["data"] == []
    assert client.get(f"/v1/legal-holds/{placed['id']}",
                      headers=tenant["compliance"]).json()["released_at"] is None


def test_holds_page_oldest_first(client: Any, tenant: dict[str, Any]) -> None:
    placed = [hold(client, tenant, subject=f"user:{n}")["id"] for n in range(3)]
    release(client, tenant, placed[1])
    first = client.get("/v1/legal-holds?limit=2", headers=tenant["compliance"]).json()
    assert [h["id"] for h in first["data"]] == placed[:2] and first["next_cursor"] == placed[1]
    rest = client.get(f"/v1/legal-holds?limit=2&cursor={first['next_cursor']}",
                      headers=tenant["compliance"]).json()
    assert [h["id"] for h in rest["data"]] == placed[2:] and rest["next_cursor"] is None
    active = client.get("/v1/legal-holds?active=true", headers=tenant["compliance"]).json()
    assert [h["id"] for h in active["data"]] == [placed[0], placed[2]]


def test_a_replayed_placement_answers_the_same_hold_and_places_no_second(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    headers = {**tenant["compliance"], "Idempotency-Key": "hold-1"}
    body = {"subject": SUBJECT, "reason": "litigation"}
    first = client.post("/v1/legal-holds", json=body, headers=headers)
    again = client.post("/v1/legal-holds", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    owner_conn.execute("DELETE FROM operation")  # the record expired: the ID still lands
    late = client.post("/v1/legal-holds", json=body, headers=headers)
    assert late.status_code == 201 and late.json()["id"] == first.json()["id"]
    assert owner_conn.execute("SELECT count(*) FROM legal_hold").fetchone()[0] == 1
