"""The console in a real headless Chromium: sign in and out, refusals, expiry, lockout, axe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.staff import sign_in as staff_sign_in
from tests.console.conftest import PASSWORD, axe_check, sign_in, wait_for_path

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

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
    browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()


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
