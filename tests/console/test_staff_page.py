"""Officers manage staff on the staff page: unlock a locked account, change a role; both
audited, CSRF protected, refused to viewers."""

from __future__ import annotations

from typing import Any

import pytest

from app.staff import sign_in
from tests.console.conftest import PASSWORD, add_staff, post_form, sign_in_client


def lock(owner_conn: Any, email: str) -> None:
    """Lock ``email`` as its fifth failed sign-in in a row would (without five Argon2 checks)."""
    owner_conn.execute(
        "INSERT INTO staff_sign_in_throttle (email_digest, failures, last_failure_at, "
        "locked_until) VALUES (%s, %s, now(), now() + interval '15 minutes')",
        (sign_in.email_digest(email), sign_in.MAX_FAILURES))


def _events(owner_conn: Any, member: dict[str, Any]) -> list[Any]:
    return owner_conn.execute(
        "SELECT action, actor, details FROM audit_event WHERE target_id = %s "
        "AND action IN ('staff.unlocked', 'staff.role_changed') ORDER BY seq",
        (member["id"],)).fetchall()


def _sign_in_form(client: Any, member: dict[str, Any]) -> Any:
    client.cookies.clear()
    return post_form(client, "/console/login",
                     {"email": member["email"], "password": PASSWORD}, csrf_from="/console/login")


def test_officer_unlocks_a_locked_member_who_then_signs_in_and_it_is_audited(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    member = add_staff(client, tenant, role="viewer", email="locked@acme.example")
    lock(owner_conn, member["email"])
    assert _sign_in_form(client, member).status_code == 429
    sign_in_client(client, staff_officer)
    page = client.get("/console/staff").text
    assert "Locked until" in page and f'aria-label="Unlock {member["email"]}"' in page
    unlocked = post_form(client, f"/console/staff/{member['id']}/unlock", {},
                         csrf_from="/console/staff")
    assert unlocked.status_code == 303
    assert unlocked.headers["location"] == "/console/staff?done=unlocked"
    after = client.get(unlocked.headers["location"]).text
    assert "Locked until" not in after and "The account was unlocked" in after
    assert _events(owner_conn, member) == [
        ("staff.unlocked", f"staff:{staff_officer['id']}", {})]
    assert _sign_in_form(client, member).status_code == 303
    # Unlocking an account that is not locked changes and audits nothing.
    sign_in_client(client, staff_officer)
    again = post_form(client, f"/console/staff/{member['id']}/unlock", {},
                      csrf_from="/console/staff")
    assert again.headers["location"] == "/console/staff?done=not-locked"
    assert len(_events(owner_conn, member)) == 1


def test_officer_makes_a_viewer_an_officer_and_back_and_both_are_audited(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    member = add_staff(client, tenant, role="viewer", email="vic@acme.example")
    sign_in_client(client, staff_officer)
    assert f'aria-label="Make officer: {member["email"]}"' in client.get("/console/staff").text
    for role in ("officer", "viewer"):
        changed = post_form(client, f"/console/staff/{member['id']}/role", {"role": role},
                            csrf_from="/console/staff")
        assert changed.status_code == 303
        assert changed.headers["location"] == "/console/staff?done=role"
        listed = client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]
        assert next(m["role"] for m in listed if m["id"] == member["id"]) == role
    actor = f"staff:{staff_officer['id']}"
    assert _events(owner_conn, member) == [
        ("staff.role_changed", actor, {"role": "officer", "previous_role": "viewer"}),
        ("staff.role_changed", actor, {"role": "viewer", "previous_role": "officer"}),
    ]


def test_an_officer_cannot_change_their_own_role_or_name_no_role(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any]
) -> None:
    member = add_staff(client, tenant, role="viewer", email="vic@acme.example")
    sign_in_client(client, staff_officer)
    own = post_form(client, f"/console/staff/{staff_officer['id']}/role", {"role": "viewer"},
                    csrf_from="/console/staff")
    assert own.status_code == 409 and "your own role" in own.text
    bad = post_form(client, f"/console/staff/{member['id']}/role", {"role": "admin"},
                    csrf_from="/console/staff")
    assert bad.status_code == 422
    roles = {m["id"]: m["role"] for m in
             client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]}
    assert roles == {staff_officer["id"]: "officer", member["id"]: "viewer"}


@pytest.mark.parametrize(("action", "data"), [("unlock", {}), ("role", {"role": "officer"})])
def test_a_viewers_unlock_or_role_change_is_403_and_changes_nothing(
    client: Any, tenant: dict[str, Any], staff_viewer: dict[str, Any], owner_conn: Any,
    action: str, data: dict[str, str]
) -> None:
    other = add_staff(client, tenant, role="viewer", email="other@acme.example")
    lock(owner_conn, other["email"])
    sign_in_client(client, staff_viewer)
    page = client.get("/console/staff").text
    assert "Locked until" in page and "Unlock" not in page and "Make " not in page
    refused = post_form(client, f"/console/staff/{other['id']}/{action}", data,
                        csrf_from="/console/staff")
    assert refused.status_code == 403
    assert _events(owner_conn, other) == []
    assert owner_conn.execute("SELECT count(*) FROM staff_sign_in_throttle").fetchone()[0] == 1


@pytest.mark.parametrize(("action", "data"), [("unlock", {}), ("role", {"role": "officer"})])
def test_an_officers_unlock_or_role_change_without_the_token_is_403(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], owner_conn: Any,
    action: str, data: dict[str, str]
) -> None:
    other = add_staff(client, tenant, role="viewer", email="other@acme.example")
    lock(owner_conn, other["email"])
    sign_in_client(client, staff_officer)
    forged = client.post(f"/console/staff/{other['id']}/{action}", follow_redirects=False,
                         data={**data, "csrf_token": "0" * 64})
    assert forged.status_code == 403
    assert _events(owner_conn, other) == []


def test_an_email_with_an_account_in_another_tenant_is_not_unlocked_early(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any],
    staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    # An officer who adds a member with another tenant's member's email could otherwise
    # unlock that email again and again and keep guessing the other account's password.
    member = add_staff(client, tenant, role="viewer", email="shared@example.org")
    add_staff(client, other_tenant, role="viewer", email="shared@example.org")
    lock(owner_conn, member["email"])
    sign_in_client(client, staff_officer)

    refused = post_form(client, f"/console/staff/{member['id']}/unlock", {},
                        csrf_from="/console/staff")

    assert refused.status_code == 409
    assert "only time lifts its lock" in refused.text
    assert _events(owner_conn, member) == []
    assert _sign_in_form(client, member).status_code == 429  # still locked
