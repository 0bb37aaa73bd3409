"""Console test plumbing: a live server, a headless Chromium, staff members, sign-in, axe.

Every browser test signs in through `sign_in(browser, live_server, member)`; every page a
test opens should pass `axe_check(browser)`.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
PASSWORD = "correct horse battery staple"
# axe-core impacts that fail a page; "moderate" and "minor" are reported, not failed.
BLOCKING_IMPACTS = ("serious", "critical")


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
    """Debian's headless Chromium through chromedriver (Selenium)."""
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
        "--window-size=1280,900",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(argument)
    # The page's console is read back: a script or style the CSP blocked shows there.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Downloads (the receipt) land where the test can read them.
    options.add_experimental_option("prefs", {
        "download.default_directory": str(tmp_path / "downloads"),
        "download.prompt_for_download": False,
    })
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def add_staff(client: Any, tenant: dict[str, Any], *, role: str, email: str | None = None,
              password: str = PASSWORD) -> dict[str, Any]:
    """A staff member created through the API: ``{"id", "email", "role", "password",
    "tenant"}``."""
    email = email or f"{role}@{tenant['id'][:8]}.example"
    response = client.post("/v1/staff", headers=tenant["compliance"],
                           json={"email": email, "role": role, "password": password})
    assert response.status_code == 201, response.text
    return {**response.json(), "password": password, "tenant": tenant}


@pytest.fixture
def staff_officer(client: Any, tenant: dict[str, Any]) -> dict[str, Any]:
    """An officer of the `tenant` fixture (Acme)."""
    return add_staff(client, tenant, role="officer")


@pytest.fixture
def staff_viewer(client: Any, tenant: dict[str, Any]) -> dict[str, Any]:
    """A read-only viewer of the `tenant` fixture (Acme)."""
    return add_staff(client, tenant, role="viewer")


def wait_for_path(browser: Any, path: str, timeout: float = 15) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, timeout).until(
        lambda d: d.current_url.split("?")[0].endswith(path))


def submit(browser: Any, button: Any, timeout: float = 20) -> None:
    """Click a form's button and wait until the page it posted to has replaced this one:
    reading an element before then finds the old page's (stale) element, and navigating
    away before then can abort the post."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    button.click()
    WebDriverWait(browser, timeout).until(expected_conditions.staleness_of(button))


def sign_in(browser: Any, live_server: str, member: dict[str, Any]) -> None:
    """Sign the browser in as ``member`` (a `staff_officer` / `staff_viewer` / `add_staff`
    result) through the sign-in form, and wait for the dashboard."""
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server}/console/login")
    browser.find_element(By.ID, "email").send_keys(member["email"])
    browser.find_element(By.ID, "password").send_keys(member["password"])
    browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()
    wait_for_path(browser, "/console/")


def sign_in_client(client: Any, member: dict[str, Any]) -> Any:
    """Sign a TestClient in as ``member``; returns the sign-in response."""
    return post_form(client, "/console/login",
                     {"email": member["email"], "password": member["password"]},
                     csrf_from="/console/login")


def csrf_token(client: Any, page: str) -> str:
    """The CSRF token of the first form on ``page`` (as the client's cookies stand)."""
    import re

    html = client.get(page).text
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, f"no CSRF field on {page}"
    return found.group(1)


def post_form(client: Any, path: str, data: dict[str, Any], *, csrf_from: str) -> Any:
    """Post ``data`` with the CSRF token read from the page ``csrf_from``."""
    token = csrf_token(client, csrf_from)
    return client.post(path, data={**data, "csrf_token": token}, follow_redirects=False)


def axe_check(browser: Any) -> list[dict[str, Any]]:
    """Run axe-core on the browser's page; fail on any serious or critical violation.
    Returns every violation found (the lesser ones included) for tests that want them."""
    browser.execute_script(AXE.read_text(encoding="utf-8"))
    result = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(r => done(JSON.stringify(r.violations)))"
        ".catch(e => done(JSON.stringify({error: String(e)})));"
    )
    violations = json.loads(result)
    assert not isinstance(violations, dict), violations
    blocking = [v for v in violations if v.get("impact") in BLOCKING_IMPACTS]
    assert not blocking, (browser.current_url, [
        (v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"]][:5])
        for v in blocking
    ])
    return list(violations)


@pytest.fixture
def signed_in(browser: Any, live_server: str) -> Callable[[dict[str, Any]], None]:
    """``signed_in(member)``: sign the `browser` fixture in on the `live_server`."""
    return lambda member: sign_in(browser, live_server, member)
