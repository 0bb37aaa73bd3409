"""Console sign-in through the HTTP interface: who gets in, what the cookie holds, headers."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from itsdangerous import TimestampSigner, URLSafeTimedSerializer

from app.core.runtime import get_runtime
from console import session as console_session
from console.routes_auth import SIGN_IN_REFUSED

COOKIE = console_session.COOKIE_NAME


def _login(client: Any, key: str, **headers: str) -> Any:
    return client.post(
        "/console/login", data={"key": key}, headers=headers, follow_redirects=False
    )


def _set_cookie_headers(response: Any) -> list[str]:
    return [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{COOKIE}=")]


def _forge(payload: dict[str, str], *, age_seconds: float = 0) -> str:
    """A cookie signed with the real secret, as if issued ``age_seconds`` ago."""

    class Backdated(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time() - age_seconds)

    return URLSafeTimedSerializer(
        get_runtime().secret_key, salt=console_session.SALT, signer=Backdated
    ).dumps(payload)


def _key_id(owner_conn: Any, tenant_id: str, role: str) -> str:
    row = owner_conn.execute(
        "SELECT id FROM api_key WHERE tenant_id = %s AND role = %s", (tenant_id, role)
    ).fetchone()
    return str(row[0])


def test_login_page_renders_a_labelled_password_field(client: Any) -> None:
    response = client.get("/console/login")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<label for="key">' in response.text
    assert 'type="password"' in response.text
    assert 'action="/console/login"' in response.text
    assert "/console/static/console.css" in response.text
    css = client.get("/console/static/console.css")
    assert css.status_code == 200
    assert ":focus-visible" in css.text


def test_compliance_key_signs_in_with_a_hardened_cookie(
    client: Any, tenant: dict[str, Any]
) -> None:
    raw_key = tenant["keys"]["compliance"]
    response = _login(client, raw_key)
    assert response.status_code == 303
    assert response.headers["location"] == "/console/"
    [cookie] = _set_cookie_headers(response)
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes
    assert "samesite=strict" in attributes
    assert "path=/console" in attributes
    assert "max-age=28800" in attributes  # the default 8 hours
    assert "secure" not in attributes  # plain http: a Secure cookie would never come back
    value = cookie.split(";")[0].split("=", 1)[1]
    assert raw_key not in value
    # The random part alone (it may itself contain "_"), not just the role prefix.
    assert raw_key.removeprefix("lethe_compliance_") not in value
    home = client.get("/console/", follow_redirects=False)
    assert home.status_code == 200
    assert "Acme" in home.text


def test_cookie_is_secure_over_https(app: Any, tenant: dict[str, Any]) -> None:
    with TestClient(app, base_url="https://testserver") as https_client:
        response = _login(https_client, tenant["keys"]["compliance"])
    assert response.status_code == 303
    [cookie] = _set_cookie_headers(response)
    assert "secure" in [part.strip().lower() for part in cookie.split(";")]


@pytest.mark.parametrize("which", ["app", "unknown", "empty"])
def test_non_compliance_keys_are_refused_without_a_cookie(
    client: Any, tenant: dict[str, Any], which: str
) -> None:
    key = {
        "app": tenant["keys"]["app"],
        "unknown": "lethe_compliance_" + "x" * 43,
        "empty": "",
    }[which]
    response = _login(client, key)
    assert response.status_code == 401
    assert SIGN_IN_REFUSED in response.text
    assert 'aria-invalid="true"' in response.text
    assert not _set_cookie_headers(response)
    if key:
        assert key not in response.text  # the key is never echoed back into the page


def test_unknown_and_app_keys_get_the_same_answer(client: Any, tenant: dict[str, Any]) -> None:
    app_key = _login(client, tenant["keys"]["app"])
    unknown = _login(client, "lethe_app_" + "y" * 43)
    assert app_key.text == unknown.text


def test_home_without_a_cookie_redirects_to_login(client: Any) -> None:
    response = client.get("/console/", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/console/login"
    bare = client.get("/console", follow_redirects=True)
    assert bare.url.path == "/console/login"


def test_tampered_cookie_is_logged_out(client: Any, tenant: dict[str, Any]) -> None:
    _login(client, tenant["keys"]["compliance"])
    good = client.cookies.get(COOKIE)
    assert good
    # Not the last character: its low bits are base64 padding, so flipping it can leave the
    # decoded signature unchanged.
    flipped = good[:-5] + ("A" if good[-5] != "A" else "B") + good[-4:]
    client.cookies.clear()
    client.cookies.set(COOKIE, flipped, path="/console")
    response = client.get("/console/", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/console/login"


def test_expired_cookie_is_logged_out(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    payload = {"tenant_id": tenant["id"], "key_id": _key_id(owner_conn, tenant["id"], "compliance")}
    client.cookies.set(COOKIE, _forge(payload, age_seconds=60), path="/console")
    assert client.get("/console/", follow_redirects=False).status_code == 200
    client.cookies.set(COOKIE, _forge(payload, age_seconds=9 * 3600), path="/console")
    assert client.get("/console/", follow_redirects=False).status_code == 303


def test_revoked_key_ends_the_session(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    _login(client, tenant["keys"]["compliance"])
    assert client.get("/console/", follow_redirects=False).status_code == 200
    owner_conn.execute(
        "UPDATE api_key SET revoked_at = now() WHERE tenant_id = %s", (tenant["id"],)
    )
    assert client.get("/console/", follow_redirects=False).status_code == 303


def test_signed_cookie_cannot_reach_across_tenants_or_roles(
    client: Any, new_tenant: Any, owner_conn: Any
) -> None:
    ours, theirs = new_tenant("Initech"), new_tenant("Umbrella")
    cases = [
        # Our tenant, their compliance key: row-level security hides the key row.
        {"tenant_id": ours["id"], "key_id": _key_id(owner_conn, theirs["id"], "compliance")},
        # Our tenant and our key, but the app key: only compliance keys may use the console.
        {"tenant_id": ours["id"], "key_id": _key_id(owner_conn, ours["id"], "app")},
    ]
    for payload in cases:
        client.cookies.set(COOKIE, _forge(payload), path="/console")
        response = client.get("/console/", follow_redirects=False)
        assert response.status_code == 303, payload


def test_logout_clears_the_cookie(client: Any, tenant: dict[str, Any]) -> None:
    _login(client, tenant["keys"]["compliance"])
    assert client.get("/console/", follow_redirects=False).status_code == 200
    response = client.post("/console/logout", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/console/login"
    [cleared] = _set_cookie_headers(response)
    assert "max-age=0" in cleared.lower()
    assert "path=/console" in cleared.lower()
    assert client.cookies.get(COOKIE) is None
    assert client.get("/console/", follow_redirects=False).status_code == 303


def test_cross_site_form_posts_are_refused(client: Any, tenant: dict[str, Any]) -> None:
    response = _login(client, tenant["keys"]["compliance"], **{"Sec-Fetch-Site": "cross-site"})
    assert response.status_code == 403
    assert not _set_cookie_headers(response)
    same = _login(client, tenant["keys"]["compliance"], **{"Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 303


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
    assert response.headers["content-security-policy"] == (
        "default-src 'self'; frame-ancestors 'none'"
    )
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-store"


def test_home_shows_this_tenant_and_not_another(client: Any, new_tenant: Any) -> None:
    ours, theirs = new_tenant("Initech"), new_tenant("Umbrella")
    _login(client, ours["keys"]["compliance"])
    home = client.get("/console/")
    assert home.status_code == 200
    assert "Initech" in home.text
    assert ours["id"] in home.text
    assert "Umbrella" not in home.text
    assert theirs["id"] not in home.text


def test_tenant_names_are_escaped(client: Any, new_tenant: Any) -> None:
    tenant = new_tenant("<script>alert(1)</script>")
    _login(client, tenant["keys"]["compliance"])
    home = client.get("/console/")
    assert "<script>alert(1)</script>" not in home.text
    assert "&lt;script&gt;" in home.text


def test_console_is_not_in_the_openapi_document(client: Any) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/console")]
    assert client.get("/console/openapi.json").status_code == 404
    assert client.get("/console/docs").status_code == 404
