"""The console in a real headless Chromium: sign in, the cookie stays out of scripts, sign out."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def live_server(app: Any, client: Any) -> Iterator[str]:
    """The test app served by uvicorn on a free local port, for the browser to reach."""
    import uvicorn

    # The TestClient (`client`) already ran the app's lifespan; a second startup would
    # initialise shared resources twice.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=_free_port(), log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="console-live-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{config.port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(
            f"needs {CHROMIUM} and {CHROMEDRIVER}: "
            "apt-get install -y chromium chromium-driver (the CI script installs them)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    # An explicit binary and driver keep selenium-manager from downloading anything.
    options.binary_location = CHROMIUM
    for argument in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,860",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _screenshot(driver: Any, path: Path) -> None:
    assert driver.save_screenshot(str(path))
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 1000


def _wait_for_path(driver: Any, path: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 15).until(lambda d: d.current_url.split("?")[0].endswith(path))


def test_compliance_officer_signs_in_and_out_in_a_browser(
    live_server: str, browser: Any, tenant: dict[str, Any], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server}/console/login")
    assert browser.find_element(By.CSS_SELECTOR, "label[for=key]").text == "Compliance key"
    key_input = browser.find_element(By.ID, "key")
    assert key_input.get_attribute("type") == "password"
    _screenshot(browser, tmp_path / "login.png")

    key_input.send_keys(tenant["keys"]["compliance"])
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    _wait_for_path(browser, "/console/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Acme"

    cookie = browser.get_cookie("lethe_console")
    assert cookie is not None and cookie["httpOnly"] is True
    assert "lethe_console" not in browser.execute_script("return document.cookie")
    _screenshot(browser, tmp_path / "home.png")

    browser.find_element(By.XPATH, "//button[normalize-space()='Sign out']").click()
    _wait_for_path(browser, "/console/login")
    assert browser.get_cookie("lethe_console") is None
    browser.get(f"{live_server}/console/")
    _wait_for_path(browser, "/console/login")


def test_wrong_key_shows_the_error_in_a_browser(
    live_server: str, browser: Any, tenant: dict[str, Any], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server}/console/login")
    browser.find_element(By.ID, "key").send_keys(tenant["keys"]["app"])
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    # The form posts and the page is replaced: wait for the new document's alert.
    alert = WebDriverWait(browser, 15).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "[role=alert]"))
    )
    assert alert.text == "That key cannot sign in to the console."
    assert browser.get_cookie("lethe_console") is None
    _screenshot(browser, tmp_path / "login-error.png")
