"""The console in a real headless Chromium: sign in and out, refusals, expiry, lockout, axe."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from app.staff import sign_in as staff_sign_in
from tests.console.conftest import PASSWORD, axe_check, sign_in, submit, wait_for_path

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# LETHE_UPDATE_SCREENSHOTS=1 writes the README's screenshots here.
DOCS = Path(__file__).resolve().parents[2] / "docs" / "console"

pytestmark = pytest.mark.slow


def _screenshot(driver: Any, path: Path) -> None:
    assert driver.save_screenshot(str(path))
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 1000


def _alert(browser: Any) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    # The form posts and the page is replaced: wait for the new document's alert.
    return WebDriverWait(browser, 20).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "[role=alert]")))


def _submit_login(browser: Any, live_server: str, email: str, password: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server}/console/login")
    browser.find_element(By.ID, "email").send_keys(email)
    browser.find_element(By.ID, "password").send_keys(password)
    submit(browser, browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]"))


def test_officer_signs_in_and_out_in_a_browser(
    live_server: str, browser: Any, staff_officer: dict[str, Any], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server}/console/login")
    assert browser.find_element(By.CSS_SELECTOR, "label[for=email]").text == "Email"
    assert browser.find_element(By.ID, "password").get_attribute("type") == "password"
    axe_check(browser)
    _screenshot(browser, tmp_path / "login.png")

    sign_in(browser, live_server, staff_officer)
    assert staff_officer["email"] in browser.find_element(By.CLASS_NAME, "who").text
    cookie = browser.get_cookie("lethe_console")
    assert cookie is not None and cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert "lethe_console" not in browser.execute_script("return document.cookie")

    browser.find_element(By.XPATH, "//button[normalize-space()='Sign out']").click()
    wait_for_path(browser, "/console/login")
    assert browser.get_cookie("lethe_console") is None
    browser.get(f"{live_server}/console/")
    wait_for_path(browser, "/console/login")


def test_wrong_password_shows_the_error_and_repeated_ones_lock(
    live_server: str, browser: Any, staff_officer: dict[str, Any], tmp_path: Path
) -> None:
    _submit_login(browser, live_server, staff_officer["email"], "not my password at all")
    assert _alert(browser).text == "That email and password do not match an account."
    assert browser.get_cookie("lethe_console") is None
    axe_check(browser)
    _screenshot(browser, tmp_path / "login-error.png")
    for _ in range(staff_sign_in.MAX_FAILURES - 1):
        _submit_login(browser, live_server, staff_officer["email"], "still not it, sorry")
    assert "Too many failed sign-ins" in _alert(browser).text
    # The right password no longer helps while the lock lasts.
    _submit_login(browser, live_server, staff_officer["email"], PASSWORD)
    assert "Too many failed sign-ins" in _alert(browser).text
    assert browser.get_cookie("lethe_console") is None


def _seed(client: Any, tenant: dict[str, Any], owner_conn: Any) -> None:
    """A tenant with something on every page: memories in several states, a hold, open
    erasure requests (one overdue) and a changed setting."""
    texts = ["Lives in Lisbon", "Prefers tea over coffee", "Works at the harbour office",
             "Allergic to peanuts", "Runs on Sunday mornings", "Has a cat called Miso"]
    ids = []
    for n, text in enumerate(texts):
        response = client.post("/v1/memories", headers=tenant["app"],
                               json={"subject": f"user:{n % 3}", "text": text})
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    for memory_id in ids[:2]:
        assert client.post(f"/v1/memories/{memory_id}/quarantine",
                           headers=tenant["compliance"]).status_code == 200
    assert client.post(f"/v1/memories/{ids[2]}/forget", headers=tenant["compliance"],
                       json={"reason": "asked to"}).status_code in (200, 202)
    assert client.post("/v1/legal-holds", headers=tenant["compliance"], json={
        "memory_ids": [ids[3]], "reason": "litigation", "case_ref": "C-2026-17"}
    ).status_code == 201
    client.patch("/v1/settings", headers=tenant["compliance"],
                 json={"erasure": {"require_approval": True}})
    filed = [client.post("/v1/erasure-requests", headers=tenant["compliance"],
                         json={"subject": f"user:{n}", "reason": "GDPR art. 17"}).json()["id"]
             for n in (7, 8)]
    owner_conn.execute("UPDATE erasure_request SET due_at = now() - interval '3 days' "
                       "WHERE id = %s", (filed[0],))


def test_officer_visits_every_page_by_keyboard_and_axe_finds_nothing_serious(
    live_server: str, browser: Any, client: Any, tenant: dict[str, Any],
    staff_officer: dict[str, Any], owner_conn: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    _seed(client, tenant, owner_conn)
    sign_in(browser, live_server, staff_officer)
    assert browser.find_element(By.ID, "stat-quarantine").text == "2"
    assert "Overdue" in browser.find_element(By.ID, "open-erasures").text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#state-chart rect.chart__bar")) == 30
    axe_check(browser)
    _screenshot(browser, tmp_path / "dashboard.png")
    if os.environ.get("LETHE_UPDATE_SCREENSHOTS") == "1":
        # The whole page, chart included, then back to the usual window for the rest.
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(1280, height + 140)
        _screenshot(browser, DOCS / "dashboard.png")
        browser.set_window_size(1280, 900)

    # Keyboard: the first Tab reaches the skip link, visibly focused; then the navigation.
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    assert focused.text == "Skip to content"
    assert focused.value_of_css_property("outline-style") != "none"
    for _ in range(12):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        if browser.switch_to.active_element.text == "Audit log":
            break
    assert browser.switch_to.active_element.text == "Audit log"
    assert browser.switch_to.active_element.value_of_css_property("outline-style") != "none"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_for_path(browser, "/console/audit")
    assert "Chain intact" in browser.find_element(By.ID, "chain-status").text
    axe_check(browser)

    browser.find_element(By.ID, "f-action").send_keys("memory")
    browser.find_element(By.ID, "f-since").send_keys("not a time")
    browser.find_element(By.ID, "f-since").send_keys(Keys.ENTER)
    error = WebDriverWait(browser, 20).until(
        expected_conditions.presence_of_element_located((By.ID, "f-since-error")))
    assert "UTC" in error.text
    axe_check(browser)

    for path in ("/console/staff", "/console/settings"):
        browser.get(live_server + path)
        axe_check(browser)

    # Settings: an invalid value is shown beside its field; a valid one saves.
    field = browser.find_element(By.ID, "f-half_lives.situational")
    field.clear()
    field.send_keys("-1")
    submit(browser, browser.find_element(By.XPATH, "//button[normalize-space()='Save settings']"))
    error = browser.find_element(By.ID, "f-half_lives.situational-error")
    assert "greater than 0" in error.text
    axe_check(browser)
    field = browser.find_element(By.ID, "f-half_lives.situational")
    field.clear()
    field.send_keys("10")
    submit(browser, browser.find_element(By.XPATH, "//button[normalize-space()='Save settings']"))
    assert browser.find_element(By.ID, "settings-saved").text == "Settings saved."
    assert client.get("/v1/settings", headers=tenant["app"]).json()[
        "half_lives"]["situational"] == 10


def _post_from_page(browser: Any, path: str, fields: dict[str, str]) -> None:
    """Submit a form built in the page, carrying the page's own CSRF token: what a viewer
    who crafted a form, or a stale tab, would send."""
    browser.execute_script(
        "const f = document.createElement('form'); f.method = 'post'; f.action = arguments[0];"
        "const token = document.querySelector('input[name=csrf_token]').value;"
        "const all = Object.assign({csrf_token: token}, arguments[1]);"
        "for (const [k, v] of Object.entries(all)) {"
        "  const i = document.createElement('input'); i.type = 'hidden'; i.name = k;"
        "  i.value = v; f.appendChild(i); }"
        "document.body.appendChild(f); f.submit();", path, fields)


def test_a_viewers_post_is_refused_in_the_browser(
    live_server: str, browser: Any, client: Any, tenant: dict[str, Any],
    staff_viewer: dict[str, Any]
) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, live_server, staff_viewer)
    browser.get(f"{live_server}/console/settings")
    assert not browser.find_elements(By.XPATH, "//button[normalize-space()='Save settings']")
    axe_check(browser)
    before = client.get("/v1/settings", headers=tenant["app"]).json()
    _post_from_page(browser, "/console/settings", {"half_lives.situational": "1"})
    heading = browser.find_element(By.TAG_NAME, "h1")
    assert heading.text == "Not allowed"
    assert "not change anything" in browser.find_element(By.CSS_SELECTOR, "[role=alert]").text
    axe_check(browser)
    assert client.get("/v1/settings", headers=tenant["app"]).json() == before


def test_a_forged_csrf_token_is_refused_in_the_browser(
    live_server: str, browser: Any, client: Any, tenant: dict[str, Any],
    staff_officer: dict[str, Any]
) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, live_server, staff_officer)
    browser.get(f"{live_server}/console/settings")
    browser.execute_script(
        "document.querySelector('form.form input[name=csrf_token]').value = 'f'.repeat(64);")
    field = browser.find_element(By.ID, "f-half_lives.situational")
    field.clear()
    field.send_keys("2")
    submit(browser, browser.find_element(By.XPATH, "//button[normalize-space()='Save settings']"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not allowed"
    assert "expired" in browser.find_element(By.CSS_SELECTOR, "[role=alert]").text
    assert client.get("/v1/settings", headers=tenant["app"]).json()[
        "half_lives"]["situational"] == 7


def test_an_idle_session_expires_in_the_browser(
    live_server: str, browser: Any, staff_officer: dict[str, Any]
) -> None:
    import time

    from itsdangerous import TimestampSigner, URLSafeTimedSerializer
    from selenium.webdriver.common.by import By

    from app.core.runtime import get_runtime
    from console import session as console_session

    sign_in(browser, live_server, staff_officer)
    cookie = browser.get_cookie(console_session.COOKIE_NAME)
    assert cookie is not None
    payload = console_session.read(cookie["value"])
    assert payload is not None

    class ThirtyOneMinutesAgo(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time() - 31 * 60)

    idle = URLSafeTimedSerializer(get_runtime().secret_key, salt=console_session.SALT,
                                  signer=ThirtyOneMinutesAgo).dumps({
        "tenant_id": str(payload.tenant_id), "staff_id": str(payload.staff_id),
        "nonce": payload.nonce, "generation": payload.generation,
        "signed_in_at": int(payload.signed_in_at.timestamp())})
    # The same session, as if its last page had been 31 minutes ago (the default is 30).
    browser.delete_cookie(console_session.COOKIE_NAME)
    browser.add_cookie({**cookie, "value": idle})
    browser.get(f"{live_server}/console/audit")
    wait_for_path(browser, "/console/login")
    assert "session ended" in browser.find_element(By.ID, "login-expired").text
    assert browser.get_cookie(console_session.COOKIE_NAME) is None
    axe_check(browser)
