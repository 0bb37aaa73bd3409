"""Recall and read-only GETs on a real streaming replica that replays two seconds late: a
recall never returns a memory forgotten before it began, whatever the replica's lag, and
without the fence it would (issue 31)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench.standby import Standby
from tests.conftest import _libpq
from tests.replicas.conftest import counted

SUBJECT = "user:replicated"
TEXT = "Keeps a tortoise called Ptolemy"


def remember(client: Any, tenant: dict[str, Any], text: str = TEXT) -> str:
    response = client.post("/v1/memories", json={"subject": SUBJECT, "text": text},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id


def recalled(client: Any, tenant: dict[str, Any]) -> list[str]:
    response = client.post("/v1/recall", json={"subject": SUBJECT, "query": "tortoise"},
                           headers=tenant["app"])
    assert response.status_code == 200, response.text
    return [result["memory"]["id"] for result in response.json()["results"]]


def forget(client: Any, tenant: dict[str, Any], memory_id: str) -> None:
    response = client.post(f"/v1/memories/{memory_id}/forget", json={}, headers=tenant["app"])
    assert response.status_code == 200, response.text


def served(server: str) -> float:
    return counted("lethe_replica_reads_total", server=server)


def fallbacks(reason: str) -> float:
    return counted("lethe_replica_fallbacks_total", reason=reason)


def replicated(client: Any, tenant: dict[str, Any], standby: Standby,
               database: dict[str, Any]) -> str:
    """A memory the standby has replayed, recalled there."""
    memory_id = remember(client, tenant)
    standby.wait_until_replayed(_libpq(database["url"]))
    before = served("replica")
    assert recalled(client, tenant) == [memory_id]
    assert served("replica") == before + 1
    return memory_id


def test_a_recall_right_after_a_forget_never_returns_it_from_a_lagging_replica(
    client: Any, tenant: dict[str, Any], standby: Standby, database: dict[str, Any],
    use_replica: Callable[..., None], admin_headers: dict[str, str],
) -> None:
    use_replica()
    memory_id = replicated(client, tenant, standby, database)
    forget(client, tenant, memory_id)
    lagging = fallbacks("lagging")
    assert recalled(client, tenant) == []
    # The replica had not replayed the forget in time: the primary served the recall.
    assert fallbacks("lagging") == lagging + 1
    shown = client.get("/metrics", headers=admin_headers).text
    assert f'lethe_replica_fallbacks_total{{reason="lagging"}} {lagging + 1}' in shown


def test_without_the_fence_the_lagging_replica_recalls_the_forgotten_memory(
    client: Any, tenant: dict[str, Any], standby: Standby, database: dict[str, Any],
    use_replica: Callable[..., None],
) -> None:
    use_replica(fence=False)
    memory_id = replicated(client, tenant, standby, database)
    forget(client, tenant, memory_id)
    assert recalled(client, tenant) == [memory_id]  # what the fence protects against


def test_a_recall_waits_for_the_replica_to_replay_the_forget_then_reads_there(
    client: Any, tenant: dict[str, Any], standby: Standby, database: dict[str, Any],
    use_replica: Callable[..., None],
) -> None:
    use_replica(wait=10.0)
    memory_id = replicated(client, tenant, standby, database)
    forget(client, tenant, memory_id)
    before, lagging = served("replica"), fallbacks("lagging")
    started = time.monotonic()
    assert recalled(client, tenant) == []
    assert time.monotonic() - started > 0.5  # it waited for the replay
    assert served("replica") == before + 1 and fallbacks("lagging") == lagging


def test_read_only_gets_are_served_by_the_replica_behind_the_same_fence(
    client: Any, tenant: dict[str, Any], standby: Standby, database: dict[str, Any],
    use_replica: Callable[..., None],
) -> None:
    use_replica()
    memory_id = replicated(client, tenant, standby, database)
    before = served("replica")
    shown = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"])
    assert shown.status_code == 200 and shown.json()["text"] == TEXT
    assert served("replica") == before + 1  # row-level security holds there as here
    forget(client, tenant, memory_id)
    assert client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 404
    listed = client.get(f"/v1/memories?subject={SUBJECT}", headers=tenant["app"])
    assert listed.status_code == 200 and listed.json()["data"] == []


def test_a_replica_that_is_down_leaves_reads_to_the_primary(
    client: Any, tenant: dict[str, Any], standby: Standby, database: dict[str, Any],
    use_replica: Callable[..., None],
) -> None:
    use_replica()
    memory_id = replicated(client, tenant, standby, database)
    standby.stop()
    try:
        unavailable = fallbacks("unavailable")
        assert recalled(client, tenant) == [memory_id]
        assert fallbacks("unavailable") == unavailable + 1
        # Skipped for a while, not asked again at every read.
        assert recalled(client, tenant) == [memory_id]
    finally:
        standby.start()
        standby.wait_until_replayed(_libpq(database["url"]))


def test_a_replica_lagging_for_minutes_leaves_recall_to_the_primary(
    client: Any, tenant: dict[str, Any], standby: Standby, database: dict[str, Any],
    use_replica: Callable[..., None],
) -> None:
    use_replica()
    memory_id = replicated(client, tenant, standby, database)
    standby.set_apply_delay("10min")
    try:
        forget(client, tenant, memory_id)
        lagging = fallbacks("lagging")
        for _ in range(3):
            assert recalled(client, tenant) == []
        assert fallbacks("lagging") == lagging + 3
    finally:
        standby.set_apply_delay("2s")
        standby.wait_until_replayed(_libpq(database["url"]), timeout=60)
    assert recalled(client, tenant) == []


def test_a_promoted_replica_is_no_longer_a_replica_and_is_skipped(
    client: Any, tenant: dict[str, Any], standby: Standby, database: dict[str, Any],
    use_replica: Callable[..., None],
) -> None:
    # Last in this module: a promoted standby no longer follows the primary.
    use_replica(fence=False)
    memory_id = replicated(client, tenant, standby, database)
    standby.pg_ctl("promote")
    forget(client, tenant, memory_id)
    unavailable = fallbacks("unavailable")
    # Without the fence, only the standby check keeps the diverged copy from answering.
    assert recalled(client, tenant) == []
    assert fallbacks("unavailable") == unavailable + 1
