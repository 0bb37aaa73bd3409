"""Recall and working memories: flagged `stale` past one half-life, omitted past the tenant's
multiple, judged at recall time (no decay beat runs in these tests)."""

from __future__ import annotations

import time
from typing import Any

from tests.memories.helpers import created

SUBJECT = "user:agent"


def _settings(client: Any, tenant: dict[str, Any], seconds: float, multiple: float) -> None:
    response = client.patch("/v1/settings", headers=tenant["compliance"], json={
        "half_lives": {"working_seconds": seconds}, "working": {"max_half_lives": multiple}})
    assert response.status_code == 200, response.text


def _recall(client: Any, tenant: dict[str, Any]) -> dict[str, list[str]]:
    response = client.post("/v1/recall", headers=tenant["app"], json={
        "subject": SUBJECT, "query": "Which flight is the user booking?", "limit": 10})
    assert response.status_code == 200, response.text
    return {result["memory"]["id"]: result["flags"] for result in response.json()["results"]}


def _age(owner_conn: Any, memory_id: str, seconds: float) -> None:
    # The ladder's clock: a working memory's age counts from its last validation.
    owner_conn.execute(
        "UPDATE memory SET last_validated_at = now() - make_interval(secs => %s) WHERE id = %s",
        (seconds, memory_id))


def test_working_memory_turns_stale_then_leaves_recall(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    _settings(client, tenant, seconds=60, multiple=4)
    fresh = created(client, tenant["app"], subject=SUBJECT, volatility="working",
                    text="The user is booking the 9:40 flight to Oslo.")
    old = created(client, tenant["app"], subject=SUBJECT, volatility="working",
                  text="The user is booking a flight with a window seat.")
    gone = created(client, tenant["app"], subject=SUBJECT, volatility="working",
                   text="The user is booking a flight with extra luggage.")
    durable = created(client, tenant["app"], subject=SUBJECT, volatility="situational",
                      text="The user is booking a flight for a conference.")
    _age(owner_conn, old["id"], 61)
    _age(owner_conn, gone["id"], 241)
    _age(owner_conn, durable["id"], 100_000)  # days-scale half-life: neither stale nor gone

    found = _recall(client, tenant)
    assert "stale" not in found[fresh["id"]]
    assert "stale" in found[old["id"]]
    assert gone["id"] not in found
    assert "stale" not in found[durable["id"]]
    # Still stored: only recall leaves it out until the session closes or decay runs.
    assert client.get(f"/v1/memories/{gone['id']}", headers=tenant["app"]).status_code == 200

    # The multiple is the tenant's: a larger one brings it back, flagged.
    _settings(client, tenant, seconds=60, multiple=5)
    assert "stale" in _recall(client, tenant)[gone["id"]]


def test_the_half_life_runs_on_the_real_clock(client: Any, tenant: dict[str, Any]) -> None:
    _settings(client, tenant, seconds=1, multiple=3)
    memory = created(client, tenant["app"], subject=SUBJECT, volatility="working",
                     text="The user is booking the 9:40 flight to Oslo.")
    written = time.monotonic()
    assert "stale" not in _recall(client, tenant)[memory["id"]]
    time.sleep(max(0.0, 1.2 - (time.monotonic() - written)))
    assert "stale" in _recall(client, tenant)[memory["id"]]
    time.sleep(max(0.0, 3.2 - (time.monotonic() - written)))
    assert memory["id"] not in _recall(client, tenant)


def test_the_working_settings_are_validated(client: Any, tenant: dict[str, Any]) -> None:
    for bad in ({"half_lives": {"working_seconds": 0}}, {"working": {"max_half_lives": -1}},
                {"working": {"unknown": 1}}):
        response = client.patch("/v1/settings", headers=tenant["compliance"], json=bad)
        assert response.status_code == 422, bad
