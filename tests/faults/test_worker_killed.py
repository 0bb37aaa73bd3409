"""A prefork worker's pool process SIGKILLed in the middle of webhook delivery, through a real
worker on the embedded broker (the shared one of tests/faults/conftest.py).

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
import time
from typing import Any

import pytest

from app.webhooks.service import DELIVER_TASK
from tests.faults.conftest import SharedWorker
from tests.faults.helpers import delivery_of, sender_of, wait_until
from tests.webhooks.helpers import receiver, register, remember, webhook_settings

pytestmark = pytest.mark.slow
DEADLINE = 90.0


def _deliveries_received(worker: SharedWorker, since: int) -> list[str]:
    return re.findall(rf"Task {re.escape(DELIVER_TASK)}\[([0-9a-f-]+)\] received",
                      worker.output(since))


def test_a_delivery_killed_after_its_commit_is_not_sent_again(
    client: Any, tenant: dict[str, Any], shared_worker: SharedWorker
) -> None:
    process, log, marker = shared_worker.process, shared_worker.log, shared_worker.crash_marker
    since = shared_worker.mark()
    with webhook_settings(allow_private="true"), receiver(answers=[204]) as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, "Waters the ferns on Sundays.")
        marker.unlink()  # armed: the next committed attempt kills its pool process
        try:
            assert client.delete(f"/v1/memories/{memory_id}",
                                 headers=tenant["app"]).status_code == 204
            # The child committed `delivered`, then died before its ack; the parent saw it.
            wait_until(lambda: "WorkerLostError" in shared_worker.output(since),
                       timeout=DEADLINE,
                       what="the pool process was not lost", log=log)
            assert marker.exists(), "the fault injection never fired"
            received = wait_until(lambda: len(_deliveries_received(shared_worker, since)) >= 2
                                  and _deliveries_received(shared_worker, since), timeout=DEADLINE,
                                  what="the killed delivery did not come back", log=log)
            task_id = received[0]
            assert received.count(task_id) >= 2
            wait_until(lambda: re.search(rf"{re.escape(task_id)}\] succeeded",
                                         shared_worker.output(since)),
                       timeout=DEADLINE, what="the redelivery did not finish", log=log)
            assert process.poll() is None
        finally:
            marker.touch()
        events = hooks.verified(hook["secret"])
    assert [event["data"]["memory_id"] for event in events] == [memory_id], \
        "the redelivery must find the attempt recorded and send nothing"
    logged = delivery_of(client, tenant, hook["id"])
    assert (logged["status"], logged["attempts"], logged["last_status_code"]) == (
        "delivered", 1, 204)


def test_a_delivery_killed_before_its_commit_is_sent_again_with_the_same_webhook_id(
    client: Any, tenant: dict[str, Any], shared_worker: SharedWorker
) -> None:
    process, log = shared_worker.process, shared_worker.log
    since = shared_worker.mark()

    def kill_the_sender(count: int, port: int) -> None:
        # The POST has arrived, its attempt is not committed: the sender dies right here
        # (only the sender, as an OOM kill would take it; its idle sibling keeps serving).
        if count == 1:
            os.kill(sender_of(process.pid, port), signal.SIGKILL)

    with webhook_settings(allow_private="true"), \
            receiver(answers=[204], on_post=kill_the_sender) as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, "Waters the ferns on Sundays.")
        assert client.delete(f"/v1/memories/{memory_id}",
                             headers=tenant["app"]).status_code == 204
        first, second = hooks.wait_for(2, timeout=DEADLINE)
        logged = wait_until(lambda: (d := delivery_of(client, tenant, hook["id"]))["status"]
                            == "delivered" and d, timeout=DEADLINE,
                            what="the delivery did not end delivered", log=log)
        assert "WorkerLostError" in shared_worker.output(since)
        time.sleep(3)  # a third POST would arrive by now
        assert process.poll() is None
        events = hooks.verified(hook["secret"])
    assert [event["data"]["memory_id"] for event in events] == [memory_id, memory_id]
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == logged["id"]
    # The killed attempt rolled back with its transaction: only the answered one is recorded.
    assert (logged["attempts"], logged["last_status_code"]) == (1, 204)
