"""Ingestion through a real Celery worker (prefork) on the embedded PostgreSQL broker.

The worker runs with `--pool=prefork --concurrency=1`: a child that dies mid-task is reported
as WorkerLostError, and with `task_reject_on_worker_lost` the unacknowledged message goes
back to the queue and is delivered to the next child.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.core import faults
from app.core.runtime import get_runtime
from app.ingestion import tasks
from tests.ingestion.helpers import (
    REPLAYED,
    SUBJECT,
    accepted,
    ingest,
    item_id,
    memory_ids,
    operation,
    operation_text,
    sent_for,
    task_ids_for,
)

pytestmark = pytest.mark.slow
DEADLINE = 90.0
BODY: dict[str, Any] = {
    "subject": SUBJECT,
    "source": "conversation:12",
    "memories": [{"text": "Keeps bees on the roof in Porto."},
                 {"text": "Plays the oboe in a quartet."},
                 {"text": "Allergic to hazelnuts."}],
    "messages": [{"role": "user", "content": "By the way I keep bees."}],
}


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log: Path
    crash_marker: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str) -> str:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            found = re.search(pattern, self.output())
            if found:
                return found.group(0)
            assert self.process.poll() is None, "the worker died:\n" + self.output()[-3000:]
            time.sleep(0.3)
        raise AssertionError(f"no {pattern!r} in the worker log:\n" + self.output()[-3000:])

    def handled(self, task_id: str) -> None:
        """Wait until the worker finished a delivery of ``task_id``."""
        self.wait_for(rf"Task ingestion\.apply\[{re.escape(task_id)}\] succeeded")


@pytest.fixture(scope="module")
def worker(database: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    folder = tmp_path_factory.mktemp("ingestion-worker")
    runtime = get_runtime()
    assert runtime.broker_url.startswith("sqla+postgresql")
    marker = folder / "crashed"
    marker.touch()  # present = fault injection disarmed; the crash test removes it
    log = folder / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": runtime.owner_url,
        "LETHE_APP_DATABASE_URL": runtime.app_url,
        "CELERY_BROKER_URL": runtime.broker_url,
        **faults.armed_for(tasks.service.APPLY_TASK, str(marker)),
    }
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "worker",
             "--pool=prefork", "--concurrency=1", "-Q", "celery", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "--loglevel=INFO"],
            env=env, stdout=sink, stderr=subprocess.STDOUT,
        )
    running = Worker(process=process, log=log, crash_marker=marker)
    try:
        running.wait_for(r"ready\.")
        yield running
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def _succeeded(client: Any, headers: dict[str, str], operation_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        read = client.get(f"/v1/operations/{operation_id}", headers=headers)
        assert read.status_code == 200, read.text
        body: dict[str, Any] = read.json()
        assert body["status"] in ("queued", "running", "succeeded"), body
        if body["status"] == "succeeded":
            return body
        time.sleep(0.3)
    raise AssertionError(f"operation {operation_id} did not succeed within {DEADLINE} s")


def _stays_forgotten(client: Any, headers: dict[str, str], memory_id: str) -> None:
    assert client.get(f"/v1/memories/{memory_id}", headers=headers).status_code == 404
    listed = client.get(f"/v1/memories?subject={SUBJECT}", headers=headers).json()["data"]
    assert memory_id not in [m["id"] for m in listed]
    recalled = client.post("/v1/recall", json={"subject": SUBJECT, "query": "bees on the roof"},
                        headers=headers).json()["results"]
    assert memory_id not in [r["memory"]["id"] for r in recalled]


def _versions(owner_conn: Any) -> int:
    count: int = owner_conn.execute("SELECT count(*) FROM memory_version").fetchone()[0]
    return count


def test_an_accepted_ingestion_succeeds_through_a_real_worker_once(
    worker: Worker, client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = ingest(client, tenant["app"], "worker-1", BODY)
    assert first.status_code == 202, first.text
    replay = ingest(client, tenant["app"], "worker-1", BODY)
    assert replay.status_code == 202 and replay.headers[REPLAYED] == "true"
    assert replay.json() == first.json()
    operation_id = first.json()["operation_id"]

    done = _succeeded(client, tenant["app"], operation_id)
    expected = [item_id(operation_id, i) for i in range(3)]
    assert done["result"]["memory_ids"] == expected
    assert done["error"] is None
    assert sent_for(owner_conn, operation_id) == 1, "the replay must not send a second task"
    assert sorted(memory_ids(owner_conn, tenant["id"])) == sorted(expected)
    for memory_id in expected:
        assert client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 200
    assert operation(owner_conn, operation_id)["request_payload"] is None
    text = operation_text(owner_conn)
    assert not any(word in text for word in ("bees", "oboe", "hazelnuts"))


def test_a_worker_killed_after_its_commit_is_redelivered_and_changes_nothing(
    worker: Worker, client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    worker.crash_marker.unlink()  # arm: the next commit of step C kills the worker child
    try:
        operation_id = accepted(client, tenant["app"], "crash-1", BODY)
        done = _succeeded(client, tenant["app"], operation_id)
        stored = operation(owner_conn, operation_id)
        updated_at = owner_conn.execute("SELECT updated_at FROM operation WHERE id = %s",
                                        (operation_id,)).fetchone()[0]
        (task_id,) = task_ids_for(owner_conn, operation_id)
        # The child died before the ack; the message came back and the next child ran it.
        worker.handled(task_id)
        assert worker.crash_marker.exists(), "the fault injection never fired"
        assert "WorkerLostError" in worker.output()
        received = re.findall(rf"Task ingestion\.apply\[{re.escape(task_id)}\] received",
                              worker.output())
        assert len(received) >= 2, "the killed delivery was not redelivered"
    finally:
        worker.crash_marker.touch()
    assert operation(owner_conn, operation_id) == stored
    assert owner_conn.execute("SELECT updated_at FROM operation WHERE id = %s",
                              (operation_id,)).fetchone()[0] == updated_at
    assert done["result"]["memory_ids"] == [item_id(operation_id, i) for i in range(3)]
    assert sorted(memory_ids(owner_conn, tenant["id"])) == sorted(done["result"]["memory_ids"])
    assert _versions(owner_conn) == 3
    applied = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE action = 'ingest.applied' AND target_id = %s",
        (operation_id,)).fetchone()[0]
    assert applied == 1, "step C must have run once"


def test_a_redelivered_ingestion_does_not_resurrect_a_forgotten_memory(
    worker: Worker, client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "forget-1", BODY)
    first = _succeeded(client, tenant["app"], operation_id)["result"]
    bees = item_id(operation_id, 0)
    assert client.delete(f"/v1/memories/{bees}", headers=tenant["app"]).status_code == 204
    versions = _versions(owner_conn)

    # A duplicate delivery, in this process and through the worker.
    tasks.apply_ingestion(operation_id, tenant["id"])
    resent = tasks.apply_ingestion.apply_async(args=[operation_id, tenant["id"]])
    worker.handled(resent.id)
    _stays_forgotten(client, tenant["app"], bees)
    assert operation(owner_conn, operation_id)["result"] == first
    assert len(memory_ids(owner_conn, tenant["id"])) == 3 and _versions(owner_conn) == versions

    # The operation record is pruned; the client sends the same request again. The key
    # derives the same operation, whose items derive the same memory IDs.
    owner_conn.execute("DELETE FROM operation WHERE id = %s", (operation_id,))
    again = ingest(client, tenant["app"], "forget-1", BODY)
    assert again.status_code == 202 and REPLAYED not in again.headers
    assert again.json()["operation_id"] == operation_id
    second = _succeeded(client, tenant["app"], operation_id)["result"]
    assert second["memory_ids"] == first["memory_ids"]
    assert second["forgotten"] == [bees]
    _stays_forgotten(client, tenant["app"], bees)
    assert len(memory_ids(owner_conn, tenant["id"])) == 3 and _versions(owner_conn) == versions
    assert "bees" not in operation_text(owner_conn)
