"""A compliance officer's reading and decisions in headless Chromium: actors as people,
readable times, the provenance component, a hold released with a reason, erasures found by
subject, a quarantine decision with nothing chosen. Each page is checked with axe-core."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.console.conftest import axe_check, submit
from tests.console.records_support import (
    quarantine,
    remember,
    sign_in_browser,
    wait_for,
)

pytestmark = pytest.mark.slow
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
READABLE = re.compile(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC")


def _by() -> Any:
    from selenium.webdriver.common.by import By

    return By


def test_audit_and_lineage_show_people_readable_times_and_the_whole_component(
    client: Any, tenant: dict[str, Any], live_server: str, browser: Any
) -> None:
    by = _by()
    source = remember(client, tenant, "Ana said she moved north in March", source="chat:12")
    parent = remember(client, tenant, "Moved to Porto", derived_from=[source])
    memory = remember(client, tenant, "Lives in Porto", derived_from=[parent])
    child = remember(client, tenant, "Profile: nurse in Porto", derived_from=[memory])
    grandchild = remember(client, tenant, "Segment: northern clinics", derived_from=[child])
    quarantine(client, tenant, memory)
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/audit")
    cells = browser.find_elements(by.CSS_SELECTOR, "#audit-events tbody td:nth-child(3)")
    shown = [cell.text for cell in cells]
    assert any(text.startswith("officer-") and text.endswith("@example.com") for text in shown)
    assert any(re.fullmatch(r"compliance key lethe_[0-9a-f]{8}…", text) for text in shown)
    assert not any(UUID.search(text) for text in shown)
    first = browser.find_element(by.CSS_SELECTOR, "#audit-events tbody time")
    assert READABLE.fullmatch(first.text)
    assert first.get_attribute("title") == first.get_attribute("datetime")
    axe_check(browser)

    browser.get(f"{live_server}/console/memories/{memory}")
    graph = browser.find_element(by.ID, "provenance-graph")
    labels = " ".join(t.text for t in graph.find_elements(by.TAG_NAME, "text"))
    for far in (source, grandchild):  # two hops up, two hops down
        assert f"memory {far[:8]}…" in labels
    assert "source: chat:12" in labels and "Segment: northern clinics" in labels
    assert len(graph.find_elements(by.CSS_SELECTOR, "path.graph__edge")) == 5
    trail = [cell.text for cell in browser.find_elements(
        by.CSS_SELECTOR, "section[aria-labelledby=audit-title] tbody td:nth-child(3)")]
    assert trail and all(text.startswith(("compliance key", "app key")) for text in trail)
    axe_check(browser)

    browser.get(f"{live_server}/console/memories/{memory}?nodes=3")
    more = browser.find_element(by.ID, "graph-more")
    assert "beyond these 3 nodes" in more.text
    submit(browser, more.find_element(by.PARTIAL_LINK_TEXT, "Show up to 200"))
    assert browser.find_elements(by.ID, "graph-more") == []
    assert len(browser.find_elements(by.CSS_SELECTOR, "#provenance-graph .graph__node")) == 6
    axe_check(browser)


def test_a_hold_is_released_only_with_a_reason_and_nothing_chosen_is_said(
    client: Any, tenant: dict[str, Any], live_server: str, browser: Any
) -> None:
    by = _by()
    waiting = remember(client, tenant, "Prefers window seats")
    quarantine(client, tenant, waiting)
    hold = client.post("/v1/legal-holds", json={"subject": "user:42", "reason": "dispute"},
                       headers=tenant["compliance"]).json()["id"]
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/holds/{hold}/release")
    submit(browser, browser.find_element(by.XPATH, "//button[normalize-space()='Release hold']"))
    error = browser.find_element(by.ID, "release-reason-error")
    assert "Give a reason" in error.text
    assert browser.find_element(by.ID, "release-reason").get_attribute("aria-invalid") == "true"
    axe_check(browser)
    assert client.get(f"/v1/legal-holds/{hold}",
                      headers=tenant["compliance"]).json()["released_at"] is None

    browser.find_element(by.ID, "release-reason").send_keys("matter settled")
    submit(browser, browser.find_element(by.XPATH, "//button[normalize-space()='Release hold']"))
    row = browser.find_element(by.CSS_SELECTOR, f"#released-holds #hold-{hold}")
    assert re.search(r"by officer-\w+@example\.com", row.text)
    events = client.get("/v1/audit", params={"target_id": hold, "action": "legal_hold.released"},
                        headers=tenant["compliance"]).json()["data"]
    assert [e["reason"] for e in events] == ["matter settled"]

    browser.get(f"{live_server}/console/quarantine")
    browser.find_element(by.CSS_SELECTOR, "button[value=forget]").click()
    # The old page has no alert: its appearing is the answer having replaced the page.
    alert = wait_for(browser, lambda d: d.find_elements(by.ID, "quarantine-error"))[0]
    assert "Nothing was chosen" in alert.text and "nothing was changed" in alert.text
    assert browser.find_elements(by.ID, f"pick-{waiting}")  # the queue, not an error page
    axe_check(browser)
    assert client.get(f"/v1/memories/{waiting}", headers=tenant["app"]).json()[
        "state"] == "quarantined"


def test_an_officer_finds_erasures_by_subject(
    client: Any, tenant: dict[str, Any], live_server: str, browser: Any
) -> None:
    by = _by()
    filed = {subject: client.post("/v1/erasure-requests", json={"subject": subject},
                                  headers=tenant["compliance"]).json()["id"]
             for subject in ("user:42", "user:7")}
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/erasures")
    browser.find_element(by.ID, "find-subject").send_keys("user:7")
    submit(browser, browser.find_element(by.CSS_SELECTOR, "#find-erasures button[type=submit]"))
    rows = wait_for(browser, lambda d: d.find_elements(by.CSS_SELECTOR, "#erasures tbody tr"))
    assert [r.text.split()[0] for r in rows] == [filed["user:7"]]
    assert browser.find_element(by.ID, "find-subject").get_attribute("value") == "user:7"
    axe_check(browser)
