"""Record pages in headless Chromium: whole tasks, each page checked with axe-core."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.runtime import get_runtime
from app.receipts import offline
from tests.console.conftest import axe_check
from tests.console.records_support import (
    console_errors,
    correct,
    quarantine,
    remember,
    sign_in_browser,
    wait_for,
)
from tests.core.test_celery_worker import worker

pytestmark = pytest.mark.slow
DOCS = Path(__file__).resolve().parents[2] / "docs" / "console"


def _by() -> Any:
    from selenium.webdriver.common.by import By

    return By


def _lineage_fixture(client: Any, tenant: dict[str, Any]) -> dict[str, str]:
    chat = remember(client, tenant, "Ana moved from Lisbon to Porto in March for a new job",
                    source="conversation:81")
    older = remember(client, tenant, "Lived in Coimbra as a student")
    memory = remember(client, tenant, "Lives in Lisbon and works as a nurse",
                      source="conversation:80", key="home_city", supersedes=[older],
                      derived_from=[chat])
    correct(client, tenant, memory, "Lives in Porto and works as a senior nurse")
    summary = remember(client, tenant, "Profile summary: nurse based in Porto",
                       derived_from=[memory, chat])
    client.post("/v1/artifacts", json={"kind": "summary_row", "ref": "crm:contact/42",
                                       "derived_from": [memory]}, headers=tenant["app"])
    return {"memory": memory, "chat": chat, "summary": summary, "older": older}


def test_search_a_subject_and_read_a_lineage_page(
    client: Any, tenant: dict[str, Any], live_server: str, browser: Any
) -> None:
    by = _by()
    made = _lineage_fixture(client, tenant)
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/memories")
    axe_check(browser)
    browser.find_element(by.ID, "subject").send_keys("user:42")
    browser.find_element(by.CSS_SELECTOR, "form[role=search] button[type=submit]").click()
    wait_for(browser, lambda d: "subject=user" in d.current_url)
    rows = browser.find_elements(by.CSS_SELECTOR, "#results tbody tr")
    assert len(rows) == 4
    axe_check(browser)

    browser.find_element(by.LINK_TEXT, made["memory"]).click()
    wait_for(browser, lambda d: d.current_url.endswith(made["memory"]))
    versions = browser.find_elements(by.CSS_SELECTOR, "#versions > li")
    assert len(versions) == 2
    assert [e.text for e in browser.find_elements(by.CSS_SELECTOR, ".diff ins")] == [
        "Porto", "senior"]
    assert [e.text for e in browser.find_elements(by.CSS_SELECTOR, ".diff del")] == [
        "Lisbon"]
    graph = browser.find_element(by.ID, "provenance-graph")
    # The whole component: chat's own source two hops up, and the summary derived from both
    # the memory and chat (src:81→chat, chat→memory, src:80→memory, memory→summary,
    # chat→summary, memory→artifact).
    assert len(graph.find_elements(by.CSS_SELECTOR, "path.graph__edge")) == 6
    assert made["older"] in browser.find_element(by.ID, "supersedes").text
    labels = " ".join(t.text for t in graph.find_elements(by.TAG_NAME, "text"))
    assert "source: conversation:80" in labels and "artifact" in labels
    assert made["summary"] in browser.find_element(by.ID, "children").text
    axe_check(browser)

    # Keyboard: Tab reaches the skip link first, and focus is visible.
    browser.get(f"{live_server}/console/memories")
    from selenium.webdriver.common.keys import Keys

    browser.find_element(by.TAG_NAME, "body").send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    assert focused.text == "Skip to content"
    assert focused.value_of_css_property("outline-style") != "none"


def test_release_a_memory_from_quarantine(
    client: Any, tenant: dict[str, Any], live_server: str, browser: Any
) -> None:
    by = _by()
    memory = remember(client, tenant, "Prefers window seats")
    other = remember(client, tenant, "Prefers aisle seats")
    quarantine(client, tenant, memory)
    quarantine(client, tenant, other)
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/quarantine")
    axe_check(browser)
    browser.find_element(by.ID, f"pick-{memory}").click()
    browser.find_element(by.ID, "reason").send_keys("checked with the customer")
    browser.find_element(by.CSS_SELECTOR, "button[value=release]").click()
    outcome = wait_for(browser, lambda d: d.find_elements(by.ID, "outcomes"))[0]
    assert "released to active" in outcome.text
    axe_check(browser)
    assert client.get(f"/v1/memories/{memory}", headers=tenant["app"]).json()[
        "state"] == "active"
    assert client.get(f"/v1/memories/{other}", headers=tenant["app"]).json()[
        "state"] == "quarantined"
    assert memory not in browser.find_element(by.ID, "quarantine-form").text


def test_place_a_hold_see_a_delete_refused_and_release_it(
    client: Any, tenant: dict[str, Any], live_server: str, browser: Any
) -> None:
    by = _by()
    memory = remember(client, tenant, "Signed the contract on 3 May")
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/holds")
    axe_check(browser)
    browser.find_element(by.ID, "scope-memory_ids").click()
    browser.find_element(by.ID, "target").send_keys(memory)
    browser.find_element(by.ID, "reason").send_keys("contract dispute")
    browser.find_element(by.ID, "case_ref").send_keys("CASE-2026-014")
    browser.find_element(by.CSS_SELECTOR, "#place-hold button[type=submit]").click()
    row = wait_for(browser, lambda d: d.find_elements(by.CSS_SELECTOR, "#active-holds tbody tr"
                                                     "[id^=hold-]"))[0]
    assert "CASE-2026-014" in row.text and "1 named memory" in row.text
    axe_check(browser)

    refused = client.delete(f"/v1/memories/{memory}", headers=tenant["app"])
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("/legal-hold")

    row.find_element(by.PARTIAL_LINK_TEXT, "Release").click()
    wait_for(browser, lambda d: d.current_url.endswith("/release"))
    axe_check(browser)
    browser.find_element(by.ID, "release-reason").send_keys("dispute settled")
    browser.find_element(by.XPATH, "//button[normalize-space()='Release hold']").click()
    wait_for(browser, lambda d: d.current_url.endswith("/console/holds"))
    released = browser.find_elements(by.CSS_SELECTOR, "#released-holds tbody tr[id^=hold-]")
    assert len(released) == 1
    assert client.delete(f"/v1/memories/{memory}", headers=tenant["app"]).status_code == 204

    browser.get(f"{live_server}/console/memories/{memory}")
    assert "Tombstone" in browser.page_source
    axe_check(browser)


def _shown_status(browser: Any) -> str | None:
    # Read in one script: the polled part may be swapped between a find and a read.
    status: str | None = browser.execute_script(
        "const part = document.getElementById('erasure-status');"
        "return part ? part.dataset.status : null;")
    return status


def test_file_an_erasure_watch_it_complete_and_verify_the_receipt(
    client: Any, tenant: dict[str, Any], live_server: str, browser: Any, tmp_path: Path
) -> None:
    by = _by()
    memory = remember(client, tenant, "Ana lives in Porto")
    remember(client, tenant, "Ana's profile summary", derived_from=[memory], subject="crm:ana")
    artifact = client.post("/v1/artifacts", json={"kind": "summary_row", "ref": "crm:row/7",
                                                  "derived_from": [memory]},
                           headers=tenant["app"]).json()["id"]
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/erasures")
    axe_check(browser)
    browser.find_element(by.ID, "subject").send_keys("user:42")
    browser.find_element(by.ID, "reason").send_keys("data subject request")
    browser.find_element(by.CSS_SELECTOR, "#file-erasure button[type=submit]").click()
    wait_for(browser, lambda d: d.find_elements(by.ID, "erasure-status"))
    request_id = browser.current_url.rsplit("/", 1)[1]
    assert _shown_status(browser) == "pending"
    axe_check(browser)

    with worker(get_runtime().broker_url, "celery"):
        # No reload: the page polls its status part and shows the artifact still to answer.
        wait_for(browser, lambda d: _shown_status(d) == "awaiting_artifacts", seconds=90)
        acknowledged = client.post(f"/v1/artifacts/{artifact}/erased", headers=tenant["app"])
        assert acknowledged.status_code in (200, 204), acknowledged.text
        wait_for(browser, lambda d: _shown_status(d) == "completed", seconds=90)
    assert "signature valid" in browser.find_element(by.ID, "signature-status").text
    ack = browser.find_element(by.ID, "receipt-artifacts").text
    assert artifact in ack and "not yet" not in ack
    axe_check(browser)
    browser.set_window_size(1280, 1800)
    assert browser.save_screenshot(str(DOCS / "receipt.png"))

    browser.find_element(by.ID, "download-receipt").click()
    downloaded = tmp_path / "downloads" / f"erasure-receipt-{request_id}.json"
    wait_for(browser, lambda d: downloaded.exists() and downloaded.stat().st_size > 0)
    receipt = json.loads(downloaded.read_text())
    assert receipt["status"] == "completed" and receipt["counts"]["memories"] == 1
    assert receipt["counts"]["derived_memories"] == 1
    key = tmp_path / "key.json"
    key.write_text(json.dumps(client.get("/v1/receipts/public-key").json()))
    assert offline.verify_file(downloaded, str(key)).ok
    assert console_errors(browser) == []  # htmx ran under the CSP without a refusal
