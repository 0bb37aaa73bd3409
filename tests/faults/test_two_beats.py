"""Two beat processes at once (a second installation's beat started by mistake, or a
failover that left the old one running), each sending decay and consolidation every 1.5 s
to one worker with two pool processes (the shared one of tests/faults/conftest.py), so
duplicate runs overlap.

What must hold: nothing moves twice. Each overdue memory becomes suspect once (one audit
transition, revision + 1), each near-duplicate is deprecated once into the newest, the audit
chain still verifies, and no run fails. The periodic jobs need no lock of their own: each
batch locks the rows it moves and skips what an overlapping run already moved.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.core.runtime import get_runtime
from tests.faults.conftest import SharedWorker
from tests.faults.helpers import beat, lethe_env, wait_until
from tests.memories.helpers import created

pytestmark = pytest.mark.slow
CITIES = ["Rome", "Oslo", "Lima", "Kyiv", "Pune", "Baku", "Doha", "Riga", "Bern", "Suva"]
TICKS = 3  # decay runs each beat must have sent before the outcome is read
INTERVAL = "1.5"
DEADLINE = 120.0


def _succeeded(worker: SharedWorker, since: int, task: str) -> int:
    return len(re.findall(rf"Task {re.escape(task)}\[[0-9a-f-]+\] succeeded",
                          worker.output(since)))


def _sent(folder: Path, beat_name: str) -> int:
    return (folder / f"{beat_name}.log").read_text(errors="replace").count(
        "Sending due task decay")


def test_two_beats_at_once_move_nothing_twice(
    client: Any, tenant: dict[str, Any], owner_conn: Any, tmp_path: Path,
    shared_worker: SharedWorker,
) -> None:
    trips = [created(client, tenant["app"], subject="user:trips",
                     text=f"Is visiting {city} this week.", volatility="situational")["id"]
             for city in CITIES]
    owner_conn.execute("UPDATE memory SET last_validated_at = now() - interval '8 days'")
    older = [created(client, tenant["app"], subject="user:diet", text=text)["id"]
             for text in ("I'm vegetarian.", "I am a vegetarian.")]
    newest = created(client, tenant["app"], subject="user:diet", text="I am vegetarian!")["id"]

    runtime = get_runtime()
    # Only the jobs under test tick this fast: the broker's queue must not grow faster than
    # one worker drains it, or the runs would queue instead of overlapping.
    often = {f"LETHE_{name}_INTERVAL_SECONDS": INTERVAL for name in ("DECAY", "CONSOLIDATE")}
    env = lethe_env(DATABASE_URL=runtime.owner_url, LETHE_APP_DATABASE_URL=runtime.app_url,
                    CELERY_BROKER_URL=runtime.broker_url, **often)
    process, log, since = shared_worker.process, shared_worker.log, shared_worker.mark()
    with beat(env, tmp_path, "beat-1"), beat(env, tmp_path, "beat-2"):
        # Both beats sent several ticks, and the worker ran as many runs as they sent.
        wait_until(lambda: all(_sent(tmp_path, name) >= TICKS for name in ("beat-1", "beat-2"))
                   and _succeeded(shared_worker, since, "forgetting.decay") >= 2 * TICKS
                   and _succeeded(shared_worker, since, "forgetting.consolidate") >= 2 * TICKS,
                   timeout=DEADLINE, what="the beats' runs did not finish", log=log)
        assert process.poll() is None
        output = shared_worker.output(since)

    suspect = owner_conn.execute(
        "SELECT count(*), count(DISTINCT target_id) FROM audit_event"
        " WHERE action = 'memory.transition' AND to_state = 'suspect'").fetchone()
    assert suspect == (len(trips), len(trips)), "a memory decayed twice, or one not at all"
    for memory_id in trips:
        read = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
        assert (read["state"], read["revision"]) == ("suspect", 2), read
    for memory_id in older:
        read = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
        assert (read["state"], read["superseded_by"], read["revision"]) == (
            "deprecated", newest, 2), read
    deprecated = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE action = 'memory.transition'"
        " AND to_state = 'deprecated'").fetchone()
    assert deprecated == (len(older),)
    assert client.get(f"/v1/memories/{newest}", headers=tenant["app"]).json()["revision"] == 1
    verified = client.get("/v1/audit/verify", headers=tenant["compliance"]).json()
    assert verified["ok"] is True, verified
    assert "ERROR" not in output and "Traceback" not in output, output[-3000:]
