"""Console sessions end on the server: a copy of the cookie stops working after signing out,
after the member's removal and after a change of their role."""

from __future__ import annotations

from typing import Any

import pytest

from console import session as console_session
from tests.console.conftest import add_staff, csrf_token, post_form, sign_in_client

COOKIE = console_session.COOKIE_NAME


def _signed_in_copy(client: Any, member: dict[str, Any]) -> str:
    """Sign ``member`` in and return a copy of their session cookie (known to work)."""
    client.cookies.clear()
    sign_in_client(client, member)
    copy: str | None = client.cookies.get(COOKIE)
    assert copy
    assert client.get("/console/", follow_redirects=False).status_code == 200
    return copy


def _replay(client: Any, copy: str, page: str = "/console/") -> Any:
    client.cookies.clear()
    client.cookies.set(COOKIE, copy, path="/console")
    return client.get(page, follow_redirects=False)


def _signed_out_events(owner_conn: Any, member: dict[str, Any]) -> int:
    count: int = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE action = 'staff.signed_out' AND target_id = %s",
        (member["id"],)).fetchone()[0]
    return count


def test_a_copy_of_the_cookie_redirects_to_sign_in_after_signing_out(
    client: Any, staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    copy = _signed_in_copy(client, staff_officer)
    token = csrf_token(client, "/console/")
    signed_out = client.post("/console/logout", data={"csrf_token": token},
                             follow_redirects=False)
    assert signed_out.status_code == 303
    for page in ("/console/", "/console/staff", "/console/audit"):
        replayed = _replay(client, copy, page)
        assert replayed.status_code == 303, page
        assert replayed.headers["location"] == "/console/login?expired=1"
    # Signing the copy out again (with its form's token) ends, and audits, nothing more.
    _replay(client, copy)
    client.cookies.set(COOKIE, copy, path="/console")
    again = client.post("/console/logout", data={"csrf_token": token}, follow_redirects=False)
    assert again.status_code == 303
    assert _signed_out_events(owner_conn, staff_officer) == 1
    # Signing in again starts a new session that works, while the old copy stays dead.
    _signed_in_copy(client, staff_officer)
    assert _replay(client, copy).status_code == 303


def test_signing_out_with_a_stale_copy_does_not_end_the_new_session(
    client: Any, staff_officer: dict[str, Any]
) -> None:
    old = _signed_in_copy(client, staff_officer)
    token = csrf_token(client, "/console/")
    client.post("/console/logout", data={"csrf_token": token}, follow_redirects=False)
    new = _signed_in_copy(client, staff_officer)
    client.cookies.clear()
    client.cookies.set(COOKIE, old, path="/console")
    assert client.post("/console/logout", data={"csrf_token": token},
                       follow_redirects=False).status_code == 303
    assert _replay(client, new).status_code == 200


@pytest.mark.parametrize("how", ["api-removal", "console-removal", "api-role-change",
                                 "console-role-change"])
def test_a_copy_of_the_cookie_redirects_to_sign_in_once_the_member_is_removed_or_changes_role(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], how: str
) -> None:
    member = add_staff(client, tenant, role="viewer", email="dana@acme.example")
    copy = _signed_in_copy(client, member)
    if how.startswith("console"):
        _signed_in_copy(client, staff_officer)
    if how == "api-removal":
        done = client.delete(f"/v1/staff/{member['id']}", headers=tenant["compliance"])
        assert done.status_code == 204
    elif how == "api-role-change":
        done = client.patch(f"/v1/staff/{member['id']}", headers=tenant["compliance"],
                            json={"role": "officer"})
        assert done.status_code == 200, done.text
    else:
        action = "remove" if how == "console-removal" else "role"
        done = post_form(client, f"/console/staff/{member['id']}/{action}",
                         {"role": "officer"}, csrf_from="/console/staff")
        assert done.status_code == 303, done.text
    replayed = _replay(client, copy)
    assert replayed.status_code == 303
    assert replayed.headers["location"] == "/console/login?expired=1"
    if how.endswith("role-change"):
        # They sign in again, now under the new role.
        _signed_in_copy(client, member)
        assert "Add a member" in client.get("/console/staff").text
