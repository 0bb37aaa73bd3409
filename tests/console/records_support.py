"""Shared steps of the record-page tests (memories, quarantine, holds, erasures).

Signing in is behind `sign_in` (HTTP client) and `sign_in_browser` (Chromium) alone, so the
way staff sign in can change in one place.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx

from tests.console.conftest import add_staff
from tests.console.conftest import sign_in as staff_sign_in
from tests.console.conftest import sign_in_client as staff_sign_in_client

CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')


def sign_in(client: Any, tenant: dict[str, Any]) -> None:
    """Sign the test client in to the console as a new officer of ``tenant``."""
    response = staff_sign_in_client(client, _officer(client, tenant))
    assert response.status_code == 303, response.text


def sign_in_browser(browser: Any, live_server: str, tenant: dict[str, Any]) -> None:
    """Sign the browser in to the console as a new officer of ``tenant``."""
    with httpx.Client(base_url=live_server) as api:
        member = _officer(api, tenant)
    staff_sign_in(browser, live_server, member)


def _officer(client: Any, tenant: dict[str, Any]) -> dict[str, Any]:
    return add_staff(client, tenant, role="officer",
                     email=f"officer-{uuid.uuid4().hex[:8]}@example.com")


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


def console_errors(browser: Any) -> list[str]:
    """Errors the pages logged since the last call (CSP refusals among them)."""
    return [entry["message"] for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE"]
