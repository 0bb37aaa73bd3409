"""A prefork worker's pool process SIGKILLed in the middle of webhook delivery, through a real
worker on the embedded broker.

What must hold: killed after its commit and before the ack, the redelivered
`webhooks.deliver` finds the attempt recorded and sends nothing more (the receiver sees one
POST); killed after the POST went out but before its commit, the redelivery sends the same
message again — at-least-once, as the docs state — with the same `webhook-id`, and the
delivery ends `delivered` once.

The same fault for the other acknowledged-late tasks is covered beside them:
`tests/ingestion/test_worker.py` (an ingestion killed after its commit applies once) and
`tests/erasure/test_worker.py` (a cascade killed mid-way converges with exact counts).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import faults
from app.core.runtime import get_runtime
from app.webhooks.service import DELIVER_TASK
from tests.faults.helpers import lethe_env, pool_children, wait_until, worker
from tests.webhooks.helpers import receiver, register, remember, webhook_settings

pytestmark = pytest.mark.slow
DEADLINE = 90.0


def _env(**values: str) -> dict[str, str]:
    runtime = get_runtime()
    return lethe_env(DATABASE_URL=runtime.owner_url, LETHE_APP_DATABASE_URL=runtime.app_url,
                     CELERY_BROKER_URL=runtime.broker_url, **values)


@pytest.fixture(scope="module")
def crashing_worker(database: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
                    ) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    """One worker for the module, its crash after commit armed while ``marker`` is absent."""
    folder = tmp_path_factory.mktemp("killed-worker")
    marker, log = folder / "crashed", folder / "worker.log"
    marker.touch()
    with webhook_settings(allow_private="true", retry_seconds="[2, 2]"), \
            worker(_env(**faults.armed_for(DELIVER_TASK, str(marker))), log) as process:
        yield process, log, marker


def _delivery(client: Any, tenant: dict[str, Any], hook_id: str) -> dict[str, Any]:
    (logged,) = client.get(f"/v1/webhooks/{hook_id}/deliveries",
                           headers=tenant["compliance"]).json()["data"]
    assert isinstance(logged, dict)
    return logged


def _deliveries_received(log: Path, since: int) -> list[str]:
    return re.findall(rf"Task {re.escape(DELIVER_TASK)}\[([0-9a-f-]+)\] received",
                      log.read_text(errors="replace")[since:])


def test_a_delivery_killed_after_its_commit_is_not_sent_again(
    client: Any, tenant: dict[str, Any],
    crashing_worker: tuple[subprocess.Popen[bytes], Path, Path],
) -> None:
    process, log, marker = crashing_worker
    since = len(log.read_text(errors="replace"))
    with webhook_settings(allow_private="true"), receiver(answers=[204]) as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, "Waters the ferns on Sundays.")
        marker.unlink()  # armed: the next committed attempt kills its pool process
        try:
            assert client.delete(f"/v1/memories/{memory_id}",
                                 headers=tenant["app"]).status_code == 204
            # The child committed `delivered`, then died before its ack; the parent saw it.
            wait_until(lambda: "WorkerLostError" in log.read_text(errors="replace")[since:],
                       timeout=DEADLINE,
                       what="the pool process was not lost", log=log)
            assert marker.exists(), "the fault injection never fired"
            received = wait_until(lambda: len(_deliveries_received(log, since)) >= 2
                                  and _deliveries_received(log, since), timeout=DEADLINE,
                                  what="the killed delivery did not come back", log=log)
            task_id = received[0]
            assert received.count(task_id) >= 2
            wait_until(lambda: re.search(rf"{re.escape(task_id)}\] succeeded",
                                         log.read_text(errors="replace")),
                       timeout=DEADLINE, what="the redelivery did not finish", log=log)
            assert process.poll() is None
        finally:
            marker.touch()
        events = hooks.verified(hook["secret"])
    assert [event["data"]["memory_id"] for event in events] == [memory_id], \
        "the redelivery must find the attempt recorded and send nothing"
    logged = _delivery(client, tenant, hook["id"])
    assert (logged["status"], logged["attempts"], logged["last_status_code"]) == (
        "delivered", 1, 204)


def test_a_delivery_killed_before_its_commit_is_sent_again_with_the_same_webhook_id(
    client: Any, tenant: dict[str, Any],
    crashing_worker: tuple[subprocess.Popen[bytes], Path, Path],
) -> None:
    process, log, _ = crashing_worker
    lost_before = log.read_bytes().count(b"WorkerLostError")

    def kill_the_sender(count: int) -> None:
        # The POST has arrived, its attempt is not committed: the sender dies right here.
        if count == 1:
            for child in pool_children(process.pid):
                os.kill(child, signal.SIGKILL)

    with webhook_settings(allow_private="true"), \
            receiver(answers=[204], on_post=kill_the_sender) as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, "Waters the ferns on Sundays.")
        assert client.delete(f"/v1/memories/{memory_id}",
                             headers=tenant["app"]).status_code == 204
        first, second = hooks.wait_for(2, timeout=DEADLINE)
        logged = wait_until(lambda: (d := _delivery(client, tenant, hook["id"]))["status"]
                            == "delivered" and d, timeout=DEADLINE,
                            what="the delivery did not end delivered", log=log)
        assert log.read_bytes().count(b"WorkerLostError") > lost_before
        time.sleep(3)  # a third POST would arrive by now
        assert process.poll() is None
        events = hooks.verified(hook["secret"])
    assert [event["data"]["memory_id"] for event in events] == [memory_id, memory_id]
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == logged["id"]
    # The killed attempt rolled back with its transaction: only the answered one is recorded.
    assert (logged["attempts"], logged["last_status_code"]) == (1, 204)
