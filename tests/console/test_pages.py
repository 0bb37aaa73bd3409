"""The dashboard, audit log, staff and settings pages over HTTP: what they show, what officers
change, what viewers are refused."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.console.conftest import PASSWORD, add_staff, post_form, sign_in_client


def _memory(client: Any, tenant: dict[str, Any], text: str) -> str:
    response = client.post("/v1/memories", headers=tenant["app"],
                           json={"subject": "user:42", "text": text})
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id


def _cell(html: str, state: str) -> int:
    found = re.search(rf'data-state="{state}">(\d+)<', html)
    assert found, state
    return int(found.group(1))


def _settings(client: Any, tenant: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = client.get("/v1/settings", headers=tenant["app"]).json()
    return body


SETTINGS_FORM = {
    "half_lives.structural": "365", "half_lives.preferential": "180",
    "half_lives.procedural": "90", "half_lives.situational": "7",
    "half_lives.working_seconds": "900", "working.max_half_lives": "4",
    "retention.deprecated_days": "30", "retention.quarantine_days": "30",
    "erasure.due_days": "30", "console.session_minutes": "30", "forget.cascade": "flag",
}


def test_dashboard_counts_states_quarantine_holds_chain_and_chart(
    client: Any, tenant: dict[str, Any], staff_viewer: dict[str, Any]
) -> None:
    kept = _memory(client, tenant, "Lives in Lisbon")
    moved = _memory(client, tenant, "Prefers tea over coffee")
    quarantined = client.post(f"/v1/memories/{moved}/quarantine", headers=tenant["compliance"])
    assert quarantined.status_code == 200, quarantined.text
    hold = client.post("/v1/legal-holds", headers=tenant["compliance"],
                       json={"memory_ids": [kept], "reason": "litigation", "case_ref": "C-1"})
    assert hold.status_code == 201, hold.text
    sign_in_client(client, staff_viewer)
    page = client.get("/console/")
    assert page.status_code == 200
    html = page.text
    assert _cell(html, "active") == 1 and _cell(html, "quarantined") == 1
    assert _cell(html, "forgotten") == 0
    assert re.search(r'id="stat-quarantine">1<', html)
    assert re.search(r'id="stat-holds">1<', html)
    assert "Intact" in html
    # The chart: one bar per day, today's includes the quarantine.
    assert html.count('class="chart__bar"') == 30
    assert re.search(r"(\d+) state changes in the last 30 days", html)
    assert "unsafe" not in page.headers["content-security-policy"]
    assert "style=" not in html  # the CSP forbids inline styles: none may be needed


def test_dashboard_lists_open_erasures_soonest_due_first_and_marks_overdue_ones(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    client.patch("/v1/settings", headers=tenant["compliance"],
                 json={"erasure": {"require_approval": True}})
    filed = [client.post("/v1/erasure-requests", headers=tenant["compliance"],
                         json={"subject": f"user:{n}", "reason": "GDPR art. 17"})
             for n in range(2)]
    assert [r.status_code for r in filed] == [202, 202], filed[0].text
    late, on_time = (r.json()["id"] for r in filed)
    owner_conn.execute("UPDATE erasure_request SET due_at = now() - interval '2 days' "
                       "WHERE id = %s", (late,))
    sign_in_client(client, staff_officer)
    html = client.get("/console/").text
    assert re.search(r'id="stat-erasures">2<', html)
    table = html[html.index('id="open-erasures"'):]
    assert table.index(f"/erasures/{late}") < table.index(f"/erasures/{on_time}")
    assert table.count("Overdue</span>") == 1
    assert "user:0" not in html  # the dashboard names requests, not subjects


def test_audit_log_filters_by_actor_action_target_and_time(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any]
) -> None:
    sign_in_client(client, staff_officer)
    actor = f"staff:{staff_officer['id']}"
    page = client.get("/console/audit", params={"actor": actor})
    assert page.status_code == 200
    assert "Chain intact" in page.text
    assert "staff.signed_in" in page.text and "staff.created" not in page.text
    family = client.get("/console/audit", params={"action": "staff"}).text
    assert "staff.created" in family and "staff.signed_in" in family
    target = client.get("/console/audit", params={"target": staff_officer["id"],
                                                  "action": "staff.created"}).text
    assert target.count("<code>staff.created</code>") == 1
    future = client.get("/console/audit", params={"since": "2999-01-01T00:00"}).text
    assert "No events match" in future
    bad = client.get("/console/audit", params={"since": "yesterday"})
    assert bad.status_code == 200
    assert 'id="f-since-error"' in bad.text and 'aria-invalid="true"' in bad.text
    stale = client.get("/console/audit", params={"cursor": "nonsense"}).text
    assert "out of date" in stale


def test_audit_log_pages_newest_first(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any]
) -> None:
    for n in range(55):
        add_staff(client, tenant, role="viewer", email=f"v{n}@acme.example", password=PASSWORD)
    sign_in_client(client, staff_officer)
    first = client.get("/console/audit").text
    seqs = [int(s) for s in re.findall(r'<td class="num">(\d+)</td>', first)]
    assert len(seqs) == 50 and seqs == sorted(seqs, reverse=True)
    older = re.search(r'href="([^"]+cursor=[^"]+)">Older events', first)
    assert older
    second = client.get(older.group(1).replace("&amp;", "&")).text
    more = [int(s) for s in re.findall(r'<td class="num">(\d+)</td>', second)]
    assert more and max(more) < min(seqs)


def test_officer_adds_and_removes_staff_and_both_are_audited(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    sign_in_client(client, staff_officer)
    added = post_form(client, "/console/staff", {"email": "New@Acme.example", "role": "viewer"},
                      csrf_from="/console/staff")
    assert added.status_code == 201
    generated = re.search(r'id="generated-password">([^<]+)<', added.text)
    assert generated and len(generated.group(1)) >= 24
    assert "new@acme.example" in added.text
    member = client.get("/v1/staff", headers=tenant["compliance"]).json()["data"][-1]
    assert member["email"] == "new@acme.example"
    removed = post_form(client, f"/console/staff/{member['id']}/remove", {},
                        csrf_from="/console/staff")
    assert removed.status_code == 303
    assert "new@acme.example" not in client.get("/console/staff").text
    actors = owner_conn.execute(
        "SELECT action, actor FROM audit_event WHERE tenant_id = %s AND target_id = %s "
        "ORDER BY seq", (tenant["id"], member["id"])).fetchall()
    assert actors == [("staff.created", f"staff:{staff_officer['id']}"),
                      ("staff.removed", f"staff:{staff_officer['id']}")]


def test_staff_form_errors_show_beside_their_fields(
    client: Any, staff_officer: dict[str, Any]
) -> None:
    sign_in_client(client, staff_officer)
    bad = post_form(client, "/console/staff",
                    {"email": "not-an-email", "role": "viewer", "password": "short"},
                    csrf_from="/console/staff")
    assert bad.status_code == 422
    assert 'id="f-email-error"' in bad.text and 'id="f-password-error"' in bad.text
    taken = post_form(client, "/console/staff",
                      {"email": staff_officer["email"], "role": "viewer"},
                      csrf_from="/console/staff")
    assert taken.status_code == 409 and 'id="f-email-error"' in taken.text
    self_removal = post_form(client, f"/console/staff/{staff_officer['id']}/remove", {},
                             csrf_from="/console/staff")
    assert self_removal.status_code == 409


def test_officer_saves_settings_through_the_service_and_it_is_audited(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    sign_in_client(client, staff_officer)
    form = {**SETTINGS_FORM, "half_lives.situational": "3.5", "erasure.due_days": "14",
            "erasure.require_approval": "on", "forget.cascade": "forget",
            "half_lives.working_seconds": "60", "working.max_half_lives": "2.5"}
    saved = post_form(client, "/console/settings", form, csrf_from="/console/settings")
    assert saved.status_code == 303
    assert saved.headers["location"] == "/console/settings?saved=1"
    settings = _settings(client, tenant)
    assert settings["half_lives"]["situational"] == 3.5
    assert settings["erasure"] == {"due_days": 14, "require_approval": True}
    assert settings["forget"]["cascade"] == "forget"
    assert settings["half_lives"]["working_seconds"] == 60
    assert settings["working"] == {"max_half_lives": 2.5}
    page = client.get("/console/settings?saved=1").text
    assert "Settings saved." in page and 'value="3.5"' in page
    [(actor, details)] = owner_conn.execute(
        "SELECT actor, details FROM audit_event WHERE tenant_id = %s "
        "AND action = 'settings.updated'", (tenant["id"],)).fetchall()
    assert actor == f"staff:{staff_officer['id']}"
    assert set(details["changed"]) == {"half_lives.situational", "erasure.due_days",
                                       "erasure.require_approval", "forget.cascade",
                                       "half_lives.working_seconds",
                                       "working.max_half_lives"}


@pytest.mark.parametrize(("field", "value"), [
    ("half_lives.situational", "0"), ("erasure.due_days", "soon"),
    ("console.session_minutes", "5000"), ("retention.quarantine_days", ""),
    ("working.max_half_lives", "-1"),
    ("forget.cascade", "shred"),
])
def test_invalid_settings_show_the_error_beside_the_field_and_change_nothing(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], field: str, value: str
) -> None:
    before = _settings(client, tenant)
    sign_in_client(client, staff_officer)
    response = post_form(client, "/console/settings", {**SETTINGS_FORM, field: value},
                         csrf_from="/console/settings")
    assert response.status_code == 422
    assert f'id="f-{field}-error"' in response.text
    assert re.search(rf'id="f-{re.escape(field)}"[^>]*aria-invalid="true"', response.text)
    if field != "forget.cascade":
        assert f'value="{value}"' in response.text  # what was typed stays for fixing
    assert _settings(client, tenant) == before


@pytest.mark.parametrize(("path", "data"), [
    ("/console/settings", SETTINGS_FORM),
    ("/console/staff", {"email": "x@acme.example", "role": "officer"}),
    ("/console/staff/00000000-0000-0000-0000-000000000000/remove", {}),
])
def test_a_viewer_reads_every_page_but_any_post_is_403(
    client: Any, tenant: dict[str, Any], staff_viewer: dict[str, Any], owner_conn: Any,
    path: str, data: dict[str, str]
) -> None:
    sign_in_client(client, staff_viewer)
    for page in ("/console/", "/console/audit", "/console/staff", "/console/settings"):
        assert client.get(page).status_code == 200, page
    assert "Add a member" not in client.get("/console/staff").text
    assert "Save settings" not in client.get("/console/settings").text
    before = owner_conn.execute("SELECT count(*) FROM audit_event").fetchone()[0]
    response = post_form(client, path, data, csrf_from="/console/settings")
    assert response.status_code == 403
    assert "not change anything" in response.text
    assert owner_conn.execute("SELECT count(*) FROM audit_event").fetchone()[0] == before


def test_an_officers_post_without_the_token_is_403(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any]
) -> None:
    sign_in_client(client, staff_officer)
    before = _settings(client, tenant)
    forged = client.post("/console/settings", follow_redirects=False,
                         data={**SETTINGS_FORM, "half_lives.situational": "1"})
    assert forged.status_code == 403
    other = add_staff(client, tenant, role="viewer", email="spare@acme.example")
    stolen = client.post(f"/console/staff/{other['id']}/remove", follow_redirects=False,
                         data={"csrf_token": "0" * 64})
    assert stolen.status_code == 403
    assert _settings(client, tenant) == before
    assert "spare@acme.example" in client.get("/console/staff").text


def test_chain_status_checks_new_events_against_the_remembered_head(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any]
) -> None:
    sign_in_client(client, staff_officer)
    client.get("/console/audit?verify=full")
    for n in range(3):
        add_staff(client, tenant, role="viewer", email=f"late{n}@acme.example")
    full = client.get("/v1/audit/verify", headers=tenant["compliance"]).json()
    page = client.get("/console/audit").text
    assert f"{full['events']} events verified" in page
    assert f"head <code>{full['head'][:16]}" in page
    again = client.get("/console/audit?verify=full").text
    assert "Chain intact" in again
