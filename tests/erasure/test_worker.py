"""An erasure through a real prefork Celery worker on the embedded broker: its pool process
is SIGKILLed in the middle of a 2,000-memory cascade, the delivery comes back, and the
cascade converges with exact counts; the artifacts are acknowledged by a real receiver's 2xx
to their signed `artifact.erase_requested` events."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.core.runtime import get_runtime
from app.keys import digests, subjects
from app.keys.errors import KeyDestroyed
from bench.erased_subject import seed
from tests.webhooks.helpers import receiver, register, webhook_settings

pytestmark = pytest.mark.slow
SUBJECT = "user:big"
MEMORIES, DERIVED, ARTIFACTS = 2000, 100, 10
DEADLINE = 240.0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


def _worker(log: Path) -> subprocess.Popen[bytes]:
    runtime = get_runtime()
    env = {**os.environ, "DATABASE_URL": runtime.owner_url,
           "LETHE_APP_DATABASE_URL": runtime.app_url, "CELERY_BROKER_URL": runtime.broker_url,
           "LETHE_ERASURE_BATCH_SIZE": "100"}
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "worker",
             "--pool=prefork", "--concurrency=1", "-Q", "celery", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "--loglevel=INFO"],
            env=env, stdout=sink, stderr=subprocess.STDOUT)


@pytest.fixture
def running_worker(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    log = tmp_path / "worker.log"
    with webhook_settings(allow_private="true"):
        process = _worker(log)
        try:
            deadline = time.monotonic() + 120
            while b"ready." not in log.read_bytes():
                assert process.poll() is None, log.read_text(errors="replace")[-3000:]
                assert time.monotonic() < deadline, "the worker did not start"
                time.sleep(0.3)
            yield process, log
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)


def test_a_worker_killed_mid_cascade_converges_with_exact_counts(
    client: Any, tenant: dict[str, Any], owner_conn: Any,
    running_worker: tuple[subprocess.Popen[bytes], Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.webhooks import tasks as webhook_tasks

    # A kill between a batch's commit and the sends after it loses those artifact events'
    # messages; beat's sweep sends them again a minute later. No beat runs here: the test
    # runs the sweep itself, without the minute's wait.
    monkeypatch.setattr(webhook_tasks, "LOST_AFTER", timedelta(0))
    process, log = running_worker
    seed(owner_conn, tenant_id=tenant["id"], subject=SUBJECT, memories=MEMORIES, versions=2,
         derived=DERIVED, artifacts=ARTIFACTS, background=200)
    data_key = subjects.subject_key(
        # cached in this process
        uuid.UUID(tenant["id"]),
            digests.subject_digest(uuid.UUID(tenant["id"]), SUBJECT))
    with receiver(answers=[200]) as hooks:
        hook = register(client, tenant, hooks.url, ["artifact.erase_requested"])
        filed = client.post("/v1/erasure-requests", json={"subject": SUBJECT},
                            headers=tenant["app"]).json()
        url = f"/v1/erasure-requests/{filed['id']}"
        deadline = time.monotonic() + DEADLINE
        killed = False
        body: dict[str, Any] = {}
        next_sweep = float("inf")
        while time.monotonic() < deadline:
            body = client.get(url, headers=tenant["compliance"]).json()
            if not killed and body["status"] == "running" and body["progress"]["done"] >= 300:
                for child in _children(process.pid):
                    os.kill(child, signal.SIGKILL)
                    killed = True
            if body["status"] in ("completed", "failed"):
                break
            if body["status"] != "awaiting_artifacts":
                next_sweep = time.monotonic() + 10
            elif time.monotonic() > next_sweep:
                webhook_tasks.retry_due()
                next_sweep = time.monotonic() + 10
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        assert killed, f"the cascade finished before it could be killed: {body}"
        assert body["status"] == "completed", (body, log.read_text(errors="replace")[-3000:])
        events = hooks.verified(hook["secret"])
    receipt = body["receipt"]
    assert receipt["counts"]["memories"] == MEMORIES
    assert receipt["counts"]["versions"] == MEMORIES * 2 + DERIVED
    assert receipt["counts"]["derived_memories"] == DERIVED
    assert receipt["counts"]["artifacts"] == ARTIFACTS
    assert len(receipt["tombstoned"]) == len(set(receipt["tombstoned"])) == MEMORIES + DERIVED
    assert body["progress"] == {"done": MEMORIES + DERIVED, "total": MEMORIES + DERIVED}
    assert {a["status"] for a in receipt["artifacts"]} == {"erased"}
    # Each artifact was told (signed, verified by the receiver's own check) at least once.
    told = {event["data"]["artifact_id"] for event in events}
    assert told == {a["id"] for a in receipt["artifacts"]}
    transitions = owner_conn.execute(
        "SELECT count(*), count(DISTINCT target_id) FROM audit_event"
        " WHERE action = 'memory.transition' AND to_state = 'forgotten'").fetchone()
    assert transitions == (MEMORIES + DERIVED, MEMORIES + DERIVED), "something erased twice"
    left = owner_conn.execute(
        "SELECT count(*) FROM memory_version v JOIN memory m ON m.id = v.memory_id"
        " WHERE m.state = 'forgotten' AND (v.sealed_text <> '' OR v.search <> '')"
    ).fetchone()[0]
    assert left == 0
    background = owner_conn.execute(
        "SELECT count(*) FROM memory_version v JOIN memory m ON m.id = v.memory_id"
        " WHERE m.subject = ANY(%s) AND v.sealed_text <> ''", ([
            digests.subject_digest(uuid.UUID(tenant["id"]), f"background:{n}")
            for n in range(100)],)).fetchone()[0]
    assert background == 200
    assert b"WorkerLostError" in log.read_bytes() or b"SIGKILL" in log.read_bytes()
    # The worker destroyed the data key; this process's cached copy stops working with it.
    assert receipt["data_key"]["key_id"] == data_key.key_id
    assert receipt["data_key"]["key_destroyed_at"] is not None
    with pytest.raises(KeyDestroyed):
        subjects.subject_key(
            uuid.UUID(tenant["id"]),
            digests.subject_digest(uuid.UUID(tenant["id"]), SUBJECT), create=False)


def test_an_erasure_runs_through_a_worker_on_the_redis_broker(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    from celery import Celery

    from tests.core.test_celery_worker import REDIS_URL, _redis_answers, worker

    if not _redis_answers():
        pytest.skip("no Redis answers at 127.0.0.1:6379; the Redis broker path is untested here")
    seed(owner_conn, tenant_id=tenant["id"], subject=SUBJECT, memories=50, versions=2,
         derived=5)
    filed = client.post("/v1/erasure-requests", json={"subject": SUBJECT},
                        headers=tenant["app"]).json()
    queue = f"test-{uuid.uuid4().hex[:8]}"
    with worker(REDIS_URL, queue) as process:
        sender = Celery("lethe-test-sender", broker=REDIS_URL)
        sender.conf.update(task_serializer="json", accept_content=["json"])
        sender.send_task("erasure.run", args=[filed["id"], tenant["id"]], queue=queue)
        deadline = time.monotonic() + DEADLINE
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = client.get(f"/v1/erasure-requests/{filed['id']}",
                              headers=tenant["app"]).json()
            if body["status"] in ("completed", "failed"):
                break
            assert process.poll() is None, "the worker died"
            time.sleep(0.3)
    assert body["status"] == "completed", body
    assert body["receipt"]["counts"]["memories"] == 50
    assert body["receipt"]["counts"]["derived_memories"] == 5
