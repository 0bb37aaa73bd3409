"""Console sign-in through the HTTP interface: who gets in, the cookie, CSRF, expiry, lockout."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from itsdangerous import TimestampSigner, URLSafeTimedSerializer

from app.core.runtime import get_runtime
from app.staff import sign_in
from console import session as console_session
from console.routes_auth import SIGN_IN_REFUSED
from tests.console.conftest import PASSWORD, add_staff, csrf_token, post_form, sign_in_client

COOKIE = console_session.COOKIE_NAME


def _login(client: Any, email: str, password: str, **headers: str) -> Any:
    token = csrf_token(client, "/console/login")
    return client.post("/console/login", headers=headers, follow_redirects=False,
                       data={"email": email, "password": password, "csrf_token": token})


def _set_cookie_headers(response: Any) -> list[str]:
    return [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{COOKIE}=")]


def _forge(payload: dict[str, Any], *, age_seconds: float = 0) -> str:
    """A cookie signed with the real secret, as if last active ``age_seconds`` ago."""

    class Backdated(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time() - age_seconds)

    return URLSafeTimedSerializer(
        get_runtime().secret_key, salt=console_session.SALT, signer=Backdated
    ).dumps(payload)


def _payload(member: dict[str, Any], *, signed_in_ago: float = 0) -> dict[str, Any]:
    # A new member's sessions are of generation 0 until one ends.
    return {"tenant_id": member["tenant"]["id"], "staff_id": member["id"], "nonce": "n" * 24,
            "generation": 0, "signed_in_at": int(time.time() - signed_in_ago)}


def _use(client: Any, value: str) -> None:
    """Replace whatever session cookie the client holds (a renewed one included)."""
    client.cookies.clear()
    client.cookies.set(COOKIE, value, path="/console")


def _events(owner_conn: Any, tenant_id: str, action: str) -> list[Any]:
    return owner_conn.execute(
        "SELECT actor, target_id, details FROM audit_event WHERE tenant_id = %s "
        "AND action = %s ORDER BY seq", (tenant_id, action)).fetchall()


def test_login_page_renders_labelled_fields_and_a_csrf_token(client: Any) -> None:
    response = client.get("/console/login")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<label for="email">' in response.text
    assert '<label for="password">' in response.text
    assert 'type="password"' in response.text
    assert 'name="csrf_token"' in response.text
    assert 'action="/console/login"' in response.text
    pre = [h for h in response.headers.get_list("set-cookie") if h.startswith("lethe_console_pre=")]
    assert pre and "httponly" in pre[0].lower() and "samesite=strict" in pre[0].lower()
    css = client.get("/console/static/console.css")
    assert css.status_code == 200
    assert ":focus-visible" in css.text


def test_officer_signs_in_with_a_hardened_cookie_and_is_audited(
    client: Any, staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    response = _login(client, staff_officer["email"], PASSWORD)
    assert response.status_code == 303
    assert response.headers["location"] == "/console/"
    [cookie] = _set_cookie_headers(response)
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes
    assert "samesite=strict" in attributes
    assert "path=/console" in attributes
    assert "max-age=1800" in attributes  # the tenant's default 30 idle minutes
    assert "secure" not in attributes  # plain http: a Secure cookie would never come back
    value = cookie.split(";")[0].split("=", 1)[1]
    assert staff_officer["email"] not in value and PASSWORD not in value
    home = client.get("/console/", follow_redirects=False)
    assert home.status_code == 200
    assert "Acme" in home.text and staff_officer["email"] in home.text
    [event] = _events(owner_conn, staff_officer["tenant"]["id"], "staff.signed_in")
    assert event[0] == f"staff:{staff_officer['id']}"


def test_email_is_matched_case_insensitively(client: Any, staff_viewer: dict[str, Any]) -> None:
    assert _login(client, "  " + staff_viewer["email"].upper(), PASSWORD).status_code == 303


def test_cookie_is_secure_over_https(app: Any, staff_officer: dict[str, Any]) -> None:
    with TestClient(app, base_url="https://testserver") as https_client:
        response = _login(https_client, staff_officer["email"], PASSWORD)
    assert response.status_code == 303
    [cookie] = _set_cookie_headers(response)
    assert "secure" in [part.strip().lower() for part in cookie.split(";")]


@pytest.mark.parametrize("which", ["wrong-password", "unknown-email", "empty", "removed"])
def test_bad_sign_ins_are_refused_alike(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any], which: str
) -> None:
    email, password = staff_officer["email"], PASSWORD
    if which == "wrong-password":
        password = "not the password at all"
    elif which == "unknown-email":
        email = "nobody@acme.example"
    elif which == "empty":
        email, password = "", ""
    else:
        # Another officer first: the tenant's last officer cannot be removed.
        add_staff(client, tenant, role="officer", email="second@acme.example")
        deleted = client.delete(f"/v1/staff/{staff_officer['id']}", headers=tenant["compliance"])
        assert deleted.status_code == 204
    response = _login(client, email, password)
    assert response.status_code == 401
    assert SIGN_IN_REFUSED in response.text
    assert 'aria-invalid="true"' in response.text
    assert not _set_cookie_headers(response)
    assert password not in response.text or not password


def test_same_email_in_two_tenants_signs_in_to_the_one_whose_password_it_is(
    client: Any, new_tenant: Any
) -> None:
    first, second = new_tenant("Initech"), new_tenant("Umbrella")
    add_staff(client, first, role="viewer", email="dpo@shared.example", password="first-" * 3)
    add_staff(client, second, role="officer", email="dpo@shared.example", password="second-" * 3)
    assert _login(client, "dpo@shared.example", "second-" * 3).status_code == 303
    home = client.get("/console/")
    assert "Umbrella" in home.text and "Initech" not in home.text


def test_without_a_session_every_page_redirects_to_login(client: Any) -> None:
    for page in ("/console/", "/console/audit", "/console/staff", "/console/settings"):
        response = client.get(page, follow_redirects=False)
        assert response.status_code == 303, page
        assert response.headers["location"] == "/console/login"
    bare = client.get("/console", follow_redirects=True)
    assert bare.url.path == "/console/login"


def test_tampered_cookie_is_signed_out(client: Any, staff_officer: dict[str, Any]) -> None:
    sign_in_client(client, staff_officer)
    good = client.cookies.get(COOKIE)
    assert good
    # Not the last character: its low bits are base64 padding.
    flipped = good[:-5] + ("A" if good[-5] != "A" else "B") + good[-4:]
    _use(client, flipped)
    response = client.get("/console/", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/console/login?expired=1"


def test_idle_session_expires_after_the_tenants_minutes(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any]
) -> None:
    payload = _payload(staff_officer)
    _use(client, _forge(payload, age_seconds=29 * 60))
    active = client.get("/console/", follow_redirects=False)
    assert active.status_code == 200
    # The page renewed the session: its cookie is signed now again.
    [renewed] = _set_cookie_headers(active)
    assert "max-age=1800" in renewed.lower()
    _use(client, _forge(payload, age_seconds=31 * 60))
    assert client.get("/console/", follow_redirects=False).status_code == 303
    # A tenant that allows 60 idle minutes keeps the same session alive.
    patched = client.patch("/v1/settings", headers=tenant["compliance"],
                           json={"console": {"session_minutes": 60}})
    assert patched.status_code == 200
    _use(client, _forge(payload, age_seconds=31 * 60))
    assert client.get("/console/", follow_redirects=False).status_code == 200


def test_session_ends_at_its_hard_lifetime_however_active(
    client: Any, staff_officer: dict[str, Any]
) -> None:
    payload = _payload(staff_officer, signed_in_ago=9 * 3600)  # the default is 8 hours
    _use(client, _forge(payload))
    assert client.get("/console/", follow_redirects=False).status_code == 303


def test_removed_member_loses_the_session(
    client: Any, tenant: dict[str, Any], staff_officer: dict[str, Any]
) -> None:
    sign_in_client(client, staff_officer)
    assert client.get("/console/", follow_redirects=False).status_code == 200
    add_staff(client, tenant, role="officer", email="second@acme.example")
    deleted = client.delete(f"/v1/staff/{staff_officer['id']}", headers=tenant["compliance"])
    assert deleted.status_code == 204
    assert client.get("/console/", follow_redirects=False).status_code == 303


def test_signed_cookie_cannot_reach_across_tenants(
    client: Any, new_tenant: Any
) -> None:
    ours, theirs = new_tenant("Initech"), new_tenant("Umbrella")
    their_officer = add_staff(client, theirs, role="officer")
    forged = {**_payload(their_officer), "tenant_id": ours["id"]}
    _use(client, _forge(forged))
    assert client.get("/console/", follow_redirects=False).status_code == 303
    unknown = {**_payload(their_officer), "staff_id": str(uuid.uuid4())}
    _use(client, _forge(unknown))
    assert client.get("/console/", follow_redirects=False).status_code == 303


def test_logout_clears_the_cookie_and_is_audited(
    client: Any, staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    sign_in_client(client, staff_officer)
    response = post_form(client, "/console/logout", {}, csrf_from="/console/")
    assert response.status_code == 303
    assert response.headers["location"] == "/console/login"
    [cleared] = _set_cookie_headers(response)
    assert "max-age=0" in cleared.lower()
    assert client.cookies.get(COOKIE) is None
    assert client.get("/console/", follow_redirects=False).status_code == 303
    [event] = _events(owner_conn, staff_officer["tenant"]["id"], "staff.signed_out")
    assert event[0] == f"staff:{staff_officer['id']}"


def test_posts_without_the_sessions_csrf_token_are_refused(
    client: Any, staff_officer: dict[str, Any]
) -> None:
    # Sign-in itself: no token, a made-up token.
    for token in (None, "0" * 64):
        data = {"email": staff_officer["email"], "password": PASSWORD}
        if token:
            data["csrf_token"] = token
        response = client.post("/console/login", data=data, follow_redirects=False)
        assert response.status_code == 403
        assert not _set_cookie_headers(response)
    sign_in_client(client, staff_officer)
    # A signed-in form: the sign-in page's token is not this session's.
    forged = client.post("/console/logout", data={"csrf_token": "f" * 64},
                         follow_redirects=False)
    assert forged.status_code == 403
    assert client.get("/console/", follow_redirects=False).status_code == 200


def test_cross_site_form_posts_are_refused(client: Any, staff_officer: dict[str, Any]) -> None:
    response = _login(client, staff_officer["email"], PASSWORD,
                      **{"Sec-Fetch-Site": "cross-site"})
    assert response.status_code == 403
    assert not _set_cookie_headers(response)
    same = _login(client, staff_officer["email"], PASSWORD, **{"Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 303


def test_repeated_failures_slow_then_lock_the_email_and_are_audited(
    client: Any, staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    tenant_id = staff_officer["tenant"]["id"]
    took = []
    for _ in range(sign_in.MAX_FAILURES):
        started = time.monotonic()
        response = _login(client, staff_officer["email"], "wrong password, again")
        took.append(time.monotonic() - started)
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.text
    # The n-th failure in a row waits at least n times the step before it answers (a lower
    # bound only: Argon2's own cost varies with the machine's load).
    for n, seconds in enumerate(took, start=1):
        assert seconds >= min(n * sign_in.DELAY_PER_FAILURE_SECONDS, sign_in.MAX_DELAY_SECONDS)
    # Locked: even the right password is refused now, without a password check.
    locked = _login(client, staff_officer["email"], PASSWORD)
    assert locked.status_code == 429
    assert not _set_cookie_headers(locked)
    failed = _events(owner_conn, tenant_id, "staff.sign_in_failed")
    assert [row[2]["failures"] for row in failed] == list(range(1, sign_in.MAX_FAILURES + 1))
    assert {row[1] for row in failed} == {staff_officer["id"]}
    [lock] = _events(owner_conn, tenant_id, "staff.sign_in_locked")
    assert lock[0] == "system:console-sign-in"
    # Another email is not affected by this one's lock.
    other = add_staff(client, staff_officer["tenant"], role="viewer", email="other@acme.example")
    assert _login(client, other["email"], PASSWORD).status_code == 303
    # The lock ends: the right password signs in again and clears the count.
    owner_conn.execute("UPDATE staff_sign_in_throttle SET locked_until = now() - interval '1s',"
                       " last_failure_at = now() - interval '1 hour'")
    client.cookies.clear()
    assert _login(client, staff_officer["email"], PASSWORD).status_code == 303
    assert owner_conn.execute("SELECT count(*) FROM staff_sign_in_throttle").fetchone()[0] == 0


def test_unknown_emails_are_locked_too(client: Any) -> None:
    for _ in range(sign_in.MAX_FAILURES):
        response = _login(client, "ghost@nowhere.example", "some password here")
    assert response.status_code == 429  # the same answer as for a real account


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/console/login"),
        ("GET", "/console/"),
        ("POST", "/console/login"),
        ("POST", "/console/logout"),
        ("GET", "/console/static/console.css"),
        ("GET", "/console/nope"),
    ],
)
def test_every_console_response_sends_security_headers(
    client: Any, method: str, path: str
) -> None:
    response = client.request(method, path, follow_redirects=False)
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-store"


def test_pages_show_this_tenant_and_not_another(client: Any, new_tenant: Any) -> None:
    ours, theirs = new_tenant("Initech"), new_tenant("Umbrella")
    sign_in_client(client, add_staff(client, ours, role="viewer"))
    for page in ("/console/", "/console/audit", "/console/staff", "/console/settings"):
        text = client.get(page).text
        assert "Initech" in text, page
        assert "Umbrella" not in text and theirs["id"] not in text, page


def test_tenant_names_are_escaped(client: Any, new_tenant: Any) -> None:
    tenant = new_tenant("<script>alert(1)</script>")
    sign_in_client(client, add_staff(client, tenant, role="officer"))
    home = client.get("/console/")
    assert "<script>alert(1)</script>" not in home.text
    assert "&lt;script&gt;" in home.text


def test_console_is_not_in_the_openapi_document(client: Any) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/console")]
    assert client.get("/console/openapi.json").status_code == 404
    assert client.get("/console/docs").status_code == 404
