"""`/docs` and `/redoc` work with no network: every asset they name is served by the app."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.console.conftest import browser, live_server  # noqa: F401  (fixtures)

ASSET_URL = re.compile(r'(?:src|href)="([^"]+)"')


def _asset_urls(html: str) -> list[str]:
    return ASSET_URL.findall(html)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_pages_name_only_same_origin_assets_and_each_is_served(
    client: Any, page: str
) -> None:
    response = client.get(page)
    assert response.status_code == 200
    urls = _asset_urls(response.text)
    assert any(url.endswith(".js") for url in urls), response.text
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, f"{page} loads {url} from elsewhere"
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert asset.content, url
    assert "cdn" not in response.text.lower() and "fonts.googleapis" not in response.text


# What a script would load by itself: an image's or a script's source, a style's url().
LOADED_ELSEWHERE = re.compile(r"""(?:\bsrc\s*[:=]\s*|url\()["'`]?(https?://[^"'`)\s]+)""")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_scripts_load_nothing_from_another_host(client: Any, page: str) -> None:
    scripts = [url for url in _asset_urls(client.get(page).text) if url.endswith(".js")]
    assert scripts
    for url in scripts:
        assert LOADED_ELSEWHERE.findall(client.get(url).text) == [], url


def test_swagger_ui_shows_no_validator_badge_from_another_host(client: Any) -> None:
    # Its default badge is an image from validator.swagger.io on any host but localhost.
    assert '"validatorUrl": null' in client.get("/docs").text


def test_the_swagger_assets_are_the_pinned_swagger_ui_5(client: Any) -> None:
    # Swagger UI 4 cannot render the OpenAPI 3.1 document this FastAPI writes.
    script = client.get("/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200
    assert client.app.openapi()["openapi"].startswith("3.1")
    version = re.search(r'PACKAGE_VERSION:"(\d+)\.\d+\.\d+"', script.text)
    assert version is not None and int(version.group(1)) >= 5


@pytest.mark.slow
def test_swagger_ui_renders_the_api_in_a_browser_without_the_network(
    browser: Any, live_server: str  # noqa: F811
) -> None:
    # This machine has no route to any CDN: a page that needed one would stay blank.
    browser.get(f"{live_server}/docs")
    deadline = time.monotonic() + 30
    titles: list[Any] = []
    while time.monotonic() < deadline:
        titles = browser.find_elements("css selector", ".swagger-ui .info .title")
        operations = browser.find_elements("css selector", ".opblock-summary-path")
        if titles and operations:
            break
        time.sleep(0.3)
    assert titles and "Lethe" in titles[0].text, browser.page_source[:2000]
    paths = {element.text.replace("\u200b", "") for element in operations}
    assert "/v1/memories" in paths
    resources = browser.execute_script(
        "return performance.getEntriesByType('resource').map(entry => entry.name)")
    assert resources and all(url.startswith(live_server) for url in resources), resources


@pytest.mark.slow
def test_redoc_renders_the_api_in_a_browser_asking_no_other_host(
    browser: Any, live_server: str  # noqa: F811
) -> None:
    browser.get(f"{live_server}/redoc")
    deadline = time.monotonic() + 30
    rendered = False
    while time.monotonic() < deadline and not rendered:
        # Rendered, its sidebar footer (where the logo was) shown, and every image settled:
        # loaded, or failed and removed.
        rendered = browser.execute_script(
            "return !!document.querySelector('.api-info h1')"
            " && [...document.querySelectorAll('a')].some(a => a.textContent.includes('Redocly'))"
            " && [...document.images].every(image => image.complete)")
        time.sleep(0.3)
    assert rendered and "Lethe" in browser.find_element("css selector", ".api-info h1").text
    # Chromium records a request that failed too: a CDN it could not reach shows here.
    resources = browser.execute_script(
        "return performance.getEntriesByType('resource').map(entry => entry.name)")
    assert resources and all(url.startswith(live_server) for url in resources), resources
