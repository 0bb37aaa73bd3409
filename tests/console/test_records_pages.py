"""The record pages through HTTP: memory search, lineage, quarantine and legal holds."""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.console.records_support import (
    correct,
    csrf_of,
    quarantine,
    remember,
    sign_in,
)


def _audit_actions(client: Any, tenant: dict[str, Any], target: str) -> list[dict[str, Any]]:
    response = client.get("/v1/audit", params={"target_id": target},
                          headers=tenant["compliance"])
    assert response.status_code == 200
    events: list[dict[str, Any]] = response.json()["data"]
    return events


def _key_actor(owner_conn: Any, tenant: dict[str, Any]) -> str:
    """The audit actor of the officer `sign_in` signed in (the newest staff member)."""
    row = owner_conn.execute("SELECT id FROM staff WHERE tenant_id = %s "
                             "ORDER BY created_at DESC LIMIT 1", (tenant["id"],)).fetchone()
    return f"staff:{row[0]}"


def test_pages_need_a_signed_in_officer(client: Any) -> None:
    for path in ("/console/memories", f"/console/memories/{uuid.uuid4()}",
                 "/console/quarantine", "/console/holds"):
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 303, path
        assert response.headers["location"] == "/console/login"


def test_search_by_subject_and_state_lists_only_that_tenant(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    ours = remember(client, tenant, "Lives in Lisbon")
    other = remember(client, tenant, "Plays the cello", subject="user:7")
    theirs = remember(client, other_tenant, "Lives in Lisbon too")
    quarantine(client, tenant, other)
    sign_in(client, tenant)

    page = client.get("/console/memories", params={"subject": "user:42"})
    assert page.status_code == 200
    assert 'action="/console/memories"' in page.text
    assert ours in page.text and "Lives in Lisbon" in page.text
    assert other not in page.text and theirs not in page.text

    by_state = client.get("/console/memories", params={"state": "quarantined"})
    assert other in by_state.text and ours not in by_state.text


def test_search_pages_through_a_subject(client: Any, tenant: dict[str, Any]) -> None:
    ids = [remember(client, tenant, f"Fact number {n}") for n in range(27)]
    sign_in(client, tenant)
    first = client.get("/console/memories", params={"subject": "user:42"})
    assert sum(memory_id in first.text for memory_id in ids) == 25
    assert "Next page" in first.text
    cursor = first.text.split("cursor=")[1].split('"')[0]
    second = client.get(f"/console/memories?subject=user%3A42&state=&cursor={cursor}")
    assert sum(memory_id in second.text for memory_id in ids) == 2
    assert ids[-1] in second.text and ids[-1] not in first.text


def test_text_search_ranks_within_the_subject(client: Any, tenant: dict[str, Any]) -> None:
    cello = remember(client, tenant, "Plays the cello in an orchestra every Thursday")
    city = remember(client, tenant, "Moved to Porto last spring")
    sign_in(client, tenant)
    page = client.get("/console/memories", params={"subject": "user:42", "q": "cello music"})
    assert page.status_code == 200
    assert cello in page.text
    assert page.text.index(cello) < page.text.index(city) if city in page.text else True
    unscoped = client.get("/console/memories", params={"q": "cello"})
    assert "enter the subject too" in unscoped.text
    assert cello not in unscoped.text


def test_lineage_shows_versions_diff_supersession_graph_flags_and_audit(
    client: Any, tenant: dict[str, Any]
) -> None:
    parent = remember(client, tenant, "Works at Initech as an engineer", source="chat:1")
    memory = remember(client, tenant, "Works at Initech", derived_from=[parent])
    correct(client, tenant, memory, "Works at Globex as a manager")
    newer = remember(client, tenant, "Works at Umbrella", supersedes=[memory])
    child = remember(client, tenant, "Career summary", derived_from=[memory])
    sign_in(client, tenant)

    page = client.get(f"/console/memories/{memory}")
    assert page.status_code == 200
    text = page.text
    assert "Version 1" in text and "Version 2" in text
    assert "<del>Initech</del>" in text or "<del>Initech " in text
    assert "<ins>Globex" in text
    assert f'href="/console/memories/{newer}"' in text  # superseded by
    assert '<svg id="provenance-graph"' in text and "graph__edge" in text
    assert f'href="/console/memories/{parent}"' in text  # derived from
    assert f'href="/console/memories/{child}"' in text  # derived into
    assert "memory.transition" in text or "memory." in text  # its audit trail
    assert "deprecated" in text

    newer_page = client.get(f"/console/memories/{newer}")
    assert f'href="/console/memories/{memory}"' in newer_page.text  # supersedes


def test_lineage_names_who_wrote_each_version(client: Any, tenant: dict[str, Any]) -> None:
    memory = remember(client, tenant, "Works at Initech")
    other = client.post("/v1/api-keys", json={"role": "app"}, headers=tenant["compliance"])
    assert other.status_code == 201, other.text
    second = {**tenant, "app": {"Authorization": f"Bearer {other.json()['key']}"}}
    correct(client, second, memory, "Works at Globex")
    sign_in(client, tenant)

    page = client.get(f"/console/memories/{memory}")
    assert page.status_code == 200
    items = re.findall(r'<li class="timeline__item.*?</li>', page.text, re.DOTALL)
    authors = [re.search(r'Written by <span class="actor" title="([^"]+)">[^<]*key', item)
               for item in items]  # named as the key's role and prefix, the actor as tooltip
    assert [found.group(1) if found else None for found in authors] == [
        _app_key(client, tenant, exclude=other.json()["id"]), f"key:{other.json()['id']}"]


def _app_key(client: Any, tenant: dict[str, Any], *, exclude: str) -> str:
    keys = client.get("/v1/api-keys", headers=tenant["compliance"]).json()["data"]
    [first] = [key["id"] for key in keys if key["role"] == "app" and key["id"] != exclude]
    return f"key:{first}"


def test_forgotten_memory_is_a_tombstone_without_content(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    memory = remember(client, tenant, "Secret diagnosis of the flu")
    forgot = client.post(f"/v1/memories/{memory}/forget", headers=tenant["app"],
                         json={"reason": "user asked"})
    assert forgot.status_code == 200
    sign_in(client, tenant)
    page = client.get(f"/console/memories/{memory}")
    assert page.status_code == 200
    assert "Tombstone" in page.text and memory in page.text
    assert "user asked" in page.text
    assert "diagnosis" not in page.text
    assert client.get(f"/console/memories/{uuid.uuid4()}").status_code == 404

    theirs = remember(client, other_tenant, "Their fact")
    assert client.get(f"/console/memories/{theirs}").status_code == 404


def test_quarantine_queue_shows_reason_and_age_and_releases_many(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = remember(client, tenant, "Likes green tea")
    second = remember(client, tenant, "Likes black coffee")
    kept = remember(client, tenant, "Likes water")
    for memory in (first, second, kept):
        quarantine(client, tenant, memory)
    sign_in(client, tenant)
    page = client.get("/console/quarantine")
    assert page.status_code == 200
    assert all(memory in page.text for memory in (first, second, kept))
    assert "compliance decision" in page.text and "<td>0 min</td>" in page.text

    done = client.post("/console/quarantine", data={
        "csrf_token": csrf_of(page.text), "action": "release", "reason": "reviewed: fine",
        "memory_id": [first, second]})
    assert done.status_code == 200
    assert "released to active" in done.text
    for memory in (first, second):
        assert client.get(f"/v1/memories/{memory}", headers=tenant["app"]).json()[
            "state"] == "active"
        [event] = [e for e in _audit_actions(client, tenant, memory) if e["to_state"] == "active"]
        assert event["reason"] == "reviewed: fine"
        assert event["actor"] == _key_actor(owner_conn, tenant)
    assert client.get(f"/v1/memories/{kept}", headers=tenant["app"]).json()[
        "state"] == "quarantined"


def test_quarantine_forget_needs_a_reason_and_respects_holds(
    client: Any, tenant: dict[str, Any]
) -> None:
    loose = remember(client, tenant, "Owns a red bicycle", source="chat:9")
    held = remember(client, tenant, "Owns a blue car", subject="user:held")
    for memory in (loose, held):
        quarantine(client, tenant, memory)
    placed = client.post("/v1/legal-holds", json={"subject": "user:held", "reason": "case"},
                         headers=tenant["compliance"])
    assert placed.status_code == 201
    sign_in(client, tenant)
    token = csrf_of(client.get("/console/quarantine").text)

    no_reason = client.post("/console/quarantine", data={
        "csrf_token": token, "action": "forget", "reason": " ", "memory_id": [loose]})
    assert no_reason.status_code == 422 and "Give a reason" in no_reason.text

    done = client.post("/console/quarantine", data={
        "csrf_token": token, "action": "forget", "reason": "obsolete",
        "exclude_source": "true", "memory_id": [loose, held]})
    assert done.status_code == 200
    assert client.get(f"/v1/memories/{loose}", headers=tenant["app"]).status_code == 404
    assert client.get(f"/v1/memories/{held}", headers=tenant["app"]).json()[
        "state"] == "quarantined"
    assert "forgotten" in done.text and "hold" in done.text.lower()
    excluded = client.get("/v1/sources/exclusions", headers=tenant["compliance"]).json()
    assert [e["source"] for e in excluded["data"]] == ["chat:9"]


def test_posts_without_the_csrf_token_are_refused(client: Any, tenant: dict[str, Any]) -> None:
    memory = remember(client, tenant, "Likes tea")
    quarantine(client, tenant, memory)
    sign_in(client, tenant)
    for token in (None, "0" * 64):
        data: dict[str, Any] = {"action": "release", "reason": "x", "memory_id": [memory]}
        if token is not None:
            data["csrf_token"] = token
        assert client.post("/console/quarantine", data=data).status_code == 403
        assert client.post("/console/holds", data={
            "scope": "subject", "target": "user:42", "reason": "r",
            **({"csrf_token": token} if token else {})}).status_code == 403
    assert client.get(f"/v1/memories/{memory}", headers=tenant["app"]).json()[
        "state"] == "quarantined"
    holds = client.get("/v1/legal-holds", headers=tenant["compliance"]).json()["data"]
    assert holds == []


def test_place_a_hold_see_what_it_holds_and_release_it(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = remember(client, tenant, "Lives in Oslo")
    remember(client, tenant, "Has a dog")
    sign_in(client, tenant)
    token = csrf_of(client.get("/console/holds").text)
    placed = client.post("/console/holds", data={
        "csrf_token": token, "scope": "subject", "target": "user:42",
        "reason": "litigation", "case_ref": "CASE-7"}, follow_redirects=False)
    assert placed.status_code == 303
    assert placed.headers["location"] == "/console/holds"
    [hold] = client.get("/v1/legal-holds", headers=tenant["compliance"]).json()["data"]
    assert hold["created_by"] == _key_actor(owner_conn, tenant)
    assert hold["case_ref"] == "CASE-7"

    listing = client.get("/console/holds")
    assert hold["id"] in listing.text and "CASE-7" in listing.text
    assert "<td>2</td>" in listing.text  # covers both memories now
    assert client.delete(f"/v1/memories/{memory}", headers=tenant["app"]).status_code == 409
    lineage = client.get(f"/console/memories/{memory}")
    assert hold["id"] in lineage.text

    confirm = client.get(f"/console/holds/{hold['id']}/release")
    assert confirm.status_code == 200 and "Release this legal hold?" in confirm.text
    released = client.post(f"/console/holds/{hold['id']}/release",
                           data={"csrf_token": csrf_of(confirm.text), "reason": "case closed"},
                           follow_redirects=False)
    assert released.status_code == 303
    assert released.headers["location"] == "/console/holds"
    assert client.get(f"/v1/legal-holds/{hold['id']}",
                      headers=tenant["compliance"]).json()["released_at"] is not None
    assert client.delete(f"/v1/memories/{memory}", headers=tenant["app"]).status_code == 204


def test_releasing_a_hold_needs_a_reason_and_audits_it(
    client: Any, tenant: dict[str, Any]
) -> None:
    placed = client.post("/v1/legal-holds", json={"subject": "user:42", "reason": "case"},
                         headers=tenant["compliance"])
    hold = placed.json()["id"]
    sign_in(client, tenant)
    confirm = client.get(f"/console/holds/{hold}/release")
    assert 'name="reason"' in confirm.text
    assert re.search(r"compliance key lethe_[0-9a-f]{8}…", confirm.text)

    blank = client.post(f"/console/holds/{hold}/release",
                        data={"csrf_token": csrf_of(confirm.text), "reason": "  "})
    assert blank.status_code == 422
    assert 'id="release-reason-error"' in blank.text and "Give a reason" in blank.text
    assert client.get(f"/v1/legal-holds/{hold}",
                      headers=tenant["compliance"]).json()["released_at"] is None

    done = client.post(f"/console/holds/{hold}/release", follow_redirects=False, data={
        "csrf_token": csrf_of(confirm.text), "reason": "matter settled"})
    assert done.status_code == 303
    [event] = [e for e in _audit_actions(client, tenant, hold)
               if e["action"] == "legal_hold.released"]
    assert event["reason"] == "matter settled" and event["actor"].startswith("staff:")
    released_row = client.get("/console/holds").text.split('id="released-holds"')[1]
    assert f'title="{event["actor"]}">officer-' in released_row  # released by, by email


def test_the_api_release_takes_an_optional_reason_into_the_audit_event(
    client: Any, tenant: dict[str, Any]
) -> None:
    holds = [client.post("/v1/legal-holds", json={"subject": f"user:{n}", "reason": "case"},
                         headers=tenant["compliance"]).json()["id"] for n in range(2)]
    with_reason = client.delete(f"/v1/legal-holds/{holds[0]}", params={"reason": "settled"},
                                headers=tenant["compliance"])
    without = client.delete(f"/v1/legal-holds/{holds[1]}", headers=tenant["compliance"])
    assert with_reason.status_code == without.status_code == 204
    reasons = [next(e["reason"] for e in _audit_actions(client, tenant, hold)
                    if e["action"] == "legal_hold.released") for hold in holds]
    assert reasons == ["settled", None]


def test_hold_form_shows_errors_beside_the_field(client: Any, tenant: dict[str, Any]) -> None:
    sign_in(client, tenant)
    token = csrf_of(client.get("/console/holds").text)
    missing = client.post("/console/holds", data={
        "csrf_token": token, "scope": "memory_ids", "target": "not-an-id", "reason": ""})
    assert missing.status_code == 422
    assert 'id="target-error"' in missing.text and 'id="reason-error"' in missing.text
    unknown = client.post("/console/holds", data={
        "csrf_token": token, "scope": "memory_ids", "target": str(uuid.uuid4()),
        "reason": "r"})
    assert unknown.status_code == 422 and "name no memory" in unknown.text
    assert client.get("/v1/legal-holds", headers=tenant["compliance"]).json()["data"] == []
