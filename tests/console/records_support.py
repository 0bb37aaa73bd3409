"""Shared steps of the record-page tests (memories, quarantine, holds, erasures).

Signing in is behind `sign_in` (HTTP client) and `sign_in_browser` (Chromium) alone, so the
way staff sign in can change in one place.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')


def sign_in(client: Any, tenant: dict[str, Any]) -> None:
    """Sign the test client in to the console as an officer of ``tenant``."""
    response = client.post("/console/login", data={"key": tenant["keys"]["compliance"]},
                           follow_redirects=False)
    assert response.status_code == 303, response.text


def sign_in_browser(browser: Any, live_server: str, tenant: dict[str, Any]) -> None:
    """Sign the browser in to the console as an officer of ``tenant``."""
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server}/console/login")
    browser.find_element(By.ID, "key").send_keys(tenant["keys"]["compliance"])
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(browser, lambda d: d.current_url.split("?")[0].endswith("/console/"))


def csrf_of(page: str) -> str:
    found = CSRF.search(page)
    assert found is not None, "the page has no CSRF field"
    return found.group(1)


def remember(client: Any, tenant: dict[str, Any], text: str, **extra: Any) -> str:
    body = {"subject": "user:42", "text": text, **extra}
    response = client.post("/v1/memories", json=body, headers=tenant["app"])
    assert response.status_code in (200, 201), response.text
    memory_id: str = response.json()["id"]
    return memory_id


def correct(client: Any, tenant: dict[str, Any], memory_id: str, text: str) -> None:
    current = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"])
    response = client.patch(f"/v1/memories/{memory_id}", json={"text": text},
                            headers={**tenant["app"], "If-Match": current.headers["etag"]})
    assert response.status_code == 200, response.text


def quarantine(client: Any, tenant: dict[str, Any], memory_id: str) -> None:
    response = client.post(f"/v1/memories/{memory_id}/quarantine",
                           headers=tenant["compliance"])
    assert response.status_code == 200, response.text


def wait_for(browser: Any, condition: Any, seconds: float = 15, message: str = "") -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds).until(condition, message)


def axe_check(browser: Any) -> None:
    """Run axe-core on the page shown; fail on any serious or critical violation."""
    browser.execute_script(AXE.read_text())
    result = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(r => done(r.violations)).catch(e => done([{id: 'axe-error', impact: 'critical',"
        " help: String(e), nodes: []}]));")
    bad = [(v["id"], v["impact"], v["help"], [n.get("target") for n in v["nodes"]][:3])
           for v in result if v["impact"] in ("serious", "critical")]
    assert not bad, f"{browser.current_url}: {bad}"


def console_errors(browser: Any) -> list[str]:
    """Errors the pages logged since the last call (CSP refusals among them)."""
    return [entry["message"] for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def live_server(app: Any, client: Any) -> Iterator[str]:
    """The test app served by uvicorn on a free local port, for the browser to reach."""
    import uvicorn

    # The TestClient (`client`) already ran the app's lifespan.
    config = uvicorn.Config(app, host="127.0.0.1", port=_free_port(), log_level="warning",
                            lifespan="off")
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
        pytest.skip(f"needs {CHROMIUM} and {CHROMEDRIVER} (apt-get install chromium "
                    "chromium-driver; scripts/test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-component-update", "--disable-sync",
                     "--window-size=1280,900",
                     f"--user-data-dir={tmp_path / 'chromium-profile'}"):
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
