"""The staff page in a real headless Chromium: an officer unlocks a locked account and changes
a member's role, and the member's own session ends with the role change."""

from __future__ import annotations

from typing import Any

import pytest

from tests.console.conftest import add_staff, axe_check, sign_in, sign_in_client, submit
from tests.console.test_staff_page import lock

pytestmark = pytest.mark.slow


def _row(browser: Any, email: str) -> Any:
    from selenium.webdriver.common.by import By

    cell = f"td[starts-with(normalize-space(), '{email}')]"
    return browser.find_element(By.XPATH, f"//table[@id='staff-members']//tr[{cell}]")


def test_officer_unlocks_an_account_and_changes_a_role_in_the_browser(
    live_server: str, browser: Any, client: Any, tenant: dict[str, Any],
    staff_officer: dict[str, Any], owner_conn: Any
) -> None:
    from selenium.webdriver.common.by import By

    member = add_staff(client, tenant, role="viewer", email="dana@acme.example")
    # The member is signed in elsewhere (the TestClient) before their role changes.
    sign_in_client(client, member)
    assert client.get("/console/", follow_redirects=False).status_code == 200
    lock(owner_conn, member["email"])

    sign_in(browser, live_server, staff_officer)
    browser.get(f"{live_server}/console/staff")
    assert "Locked until" in _row(browser, member["email"]).text
    axe_check(browser)

    submit(browser, _row(browser, member["email"]).find_element(
        By.XPATH, ".//button[normalize-space()='Unlock']"))
    assert "unlocked" in browser.find_element(By.CSS_SELECTOR, "[role=status]").text
    assert "Locked until" not in _row(browser, member["email"]).text
    assert owner_conn.execute("SELECT count(*) FROM staff_sign_in_throttle").fetchone()[0] == 0

    submit(browser, _row(browser, member["email"]).find_element(
        By.XPATH, ".//button[normalize-space()='Make officer']"))
    assert "role was changed" in browser.find_element(By.CSS_SELECTOR, "[role=status]").text
    row = _row(browser, member["email"])
    assert row.find_element(By.CLASS_NAME, "badge--officer").text == "officer"
    assert row.find_elements(By.XPATH, ".//button[normalize-space()='Make viewer']")
    axe_check(browser)

    events = owner_conn.execute(
        "SELECT action, actor FROM audit_event WHERE target_id = %s AND action IN "
        "('staff.unlocked', 'staff.role_changed') ORDER BY seq", (member["id"],)).fetchall()
    actor = f"staff:{staff_officer['id']}"
    assert events == [("staff.unlocked", actor), ("staff.role_changed", actor)]
    # The member's session ended with the change: they sign in again as an officer.
    assert client.get("/console/", follow_redirects=False).status_code == 303
