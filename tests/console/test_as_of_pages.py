"""The console "as of" a time: memory search answers as recall did then, a lineage page shows
the state, flags and versions then; forgotten memories never come back. Through HTTP, and in
headless Chromium."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from tests.console.conftest import axe_check
from tests.console.records_support import (
    correct,
    quarantine,
    remember,
    sign_in,
    sign_in_browser,
    wait_for,
)


def _mark() -> str:
    time.sleep(1.05)  # the form's times are to the second
    instant = datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat()
    time.sleep(1.05)
    return instant


def test_search_and_lineage_as_of_a_time(client: Any, tenant: dict[str, Any]) -> None:
    memory = remember(client, tenant, "Lives in Lisbon")
    secret = remember(client, tenant, "Lives beside the sneaker shop")
    before = _mark()
    correct(client, tenant, memory, "Lives in Porto")
    assert client.delete(f"/v1/memories/{secret}", headers=tenant["app"]).status_code == 204
    quarantine(client, tenant, memory)
    sign_in(client, tenant)

    then = client.get("/console/memories", params={"subject": "user:42", "q": "lives",
                                                   "as_of": before})
    assert then.status_code == 200
    assert "Lives in Lisbon" in then.text and "as-of-shown" in then.text
    assert "Porto" not in then.text
    assert "sneaker" not in then.text and secret not in then.text  # forgotten: never back
    now = client.get("/console/memories", params={"subject": "user:42", "q": "lives"})
    assert "Lives in Lisbon" not in now.text  # quarantined now: not ranked

    page = client.get(f"/console/memories/{memory}", params={"as_of": before})
    assert page.status_code == 200
    assert "As it stood at" in page.text and "quarantined" not in page.text.split(
        'id="versions"')[0].split("As it stood at")[1]
    assert page.text.count("<li class=\"timeline__item") == 1 and "Lives in Lisbon" in page.text
    current = client.get(f"/console/memories/{memory}")
    assert current.text.count("<li class=\"timeline__item") == 2
    assert client.get(f"/console/memories/{secret}",
                      params={"as_of": before}).status_code == 404
    bad = client.get("/console/memories", params={"subject": "user:42", "q": "lives",
                                                  "as_of": "yesterday"})
    assert bad.status_code == 422


def test_as_of_in_the_browser(client: Any, tenant: dict[str, Any], live_server: str,
                              browser: Any) -> None:
    from selenium.webdriver.common.by import By

    memory = remember(client, tenant, "Plays the cello")
    before = _mark()
    correct(client, tenant, memory, "Plays the viola")
    sign_in_browser(browser, live_server, tenant)

    browser.get(f"{live_server}/console/memories?subject=user:42&q=plays&as_of={before}")
    wait_for(browser, lambda d: d.find_elements(By.ID, "as-of-shown"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")
    assert [r.find_element(By.CSS_SELECTOR, ".records__text").text for r in rows] == [
        "Plays the cello"]
    assert browser.find_element(By.ID, "as_of").get_attribute("value").startswith(before[:16])
    axe_check(browser)
    rows[0].find_element(By.TAG_NAME, "a").click()
    wait_for(browser, lambda d: "as_of=" in d.current_url and memory in d.current_url)
    versions = browser.find_elements(By.CSS_SELECTOR, "#versions > li")
    assert [v.find_element(By.CSS_SELECTOR, ".timeline__text").text for v in versions] == [
        "Plays the cello"]
    axe_check(browser)
