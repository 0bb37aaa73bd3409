"""A webhook receiver that accepts the connection and never answers, beside a healthy one,
through the shared real worker (tests/faults/conftest.py).

What must hold: each attempt on the hanging receiver ends within the configured timeout
(`LETHE_WEBHOOKS_TIMEOUT_SECONDS`) and is recorded as a timeout; it is retried after the
configured waits and ends `failed` after the last; the healthy receiver gets its event
meanwhile, before the hanging one's first retry; the worker stays up; and the API answers
reads and writes at its usual speed while an attempt hangs.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.faults.conftest import SharedWorker
from tests.faults.helpers import WEBHOOK_TIMEOUT, WEBHOOK_WAITS, delivery_of, wait_until
from tests.webhooks.helpers import receiver, register, remember, webhook_settings

pytestmark = pytest.mark.slow
TIMEOUT, WAITS = WEBHOOK_TIMEOUT, WEBHOOK_WAITS
SLACK = 1.5  # scheduling on a busy machine
DEADLINE = 90.0


@dataclass
class Hanging:
    """A TCP server that reads what it is sent and never answers; when each connection was
    accepted and when the sender gave up on it."""

    url: str
    accepted: list[float] = field(default_factory=list)
    closed: list[float] = field(default_factory=list)


@contextmanager
def hanging_receiver() -> Iterator[Hanging]:
    listener = socket.create_server(("127.0.0.1", 0))
    hanging = Hanging(f"http://127.0.0.1:{listener.getsockname()[1]}/hooks")
    stopping = threading.Event()

    def hold(conn: socket.socket) -> None:
        with conn:
            while conn.recv(65536):  # b"" once the sender closed its end
                pass
            hanging.closed.append(time.monotonic())

    def serve() -> None:
        while not stopping.is_set():
            with suppress(OSError):
                conn, _ = listener.accept()
                hanging.accepted.append(time.monotonic())
                threading.Thread(target=hold, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield hanging
    finally:
        stopping.set()
        listener.close()


def test_a_hanging_receiver_times_out_is_retried_and_blocks_nothing(
    client: Any, tenant: dict[str, Any], shared_worker: SharedWorker
) -> None:
    process, log = shared_worker.process, shared_worker.log
    with webhook_settings(allow_private="true"), hanging_receiver() as stuck, \
            receiver(answers=[204]) as healthy:
        # Registered first, so its delivery is the first the worker takes.
        hung = register(client, tenant, stuck.url, ["memory.forgotten"])
        fine = register(client, tenant, healthy.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, "Keeps a kayak in the garage.")
        assert client.delete(f"/v1/memories/{memory_id}",
                             headers=tenant["app"]).status_code == 204
        wait_until(lambda: stuck.accepted, timeout=DEADLINE, what="no attempt hung",
                   log=log)
        # While the attempt hangs (holding its delivery row), the API is unaffected.
        started = time.monotonic()
        listed = client.get(f"/v1/webhooks/{hung['id']}/deliveries",
                            headers=tenant["compliance"])
        other = remember(client, tenant, "Rows on the river at dawn.", subject="user:2")
        assert listed.status_code == 200 and other
        assert time.monotonic() - started < TIMEOUT, "the API waited on the hanging attempt"

        healthy.wait_for(1, timeout=DEADLINE)
        arrived = time.monotonic()
        final = wait_until(lambda: (d := delivery_of(client, tenant, hung["id"]))["status"]
                           == "failed" and d, timeout=DEADLINE,
                           what="the hanging delivery did not end failed", log=log)
        assert process.poll() is None, "the worker died"
    assert (final["attempts"], final["last_error"], final["last_status_code"]) == (
        len(WAITS) + 1, "timeout", None)
    assert len(stuck.accepted) == len(WAITS) + 1
    for opened, gave_up in zip(stuck.accepted, stuck.closed, strict=True):
        assert gave_up - opened <= TIMEOUT + SLACK, "an attempt outlived its timeout"
    for index, wait in enumerate(WAITS):
        assert stuck.accepted[index + 1] - stuck.accepted[index] >= wait, \
            "a retry came before its wait"
    assert arrived < stuck.accepted[1], "the healthy receiver waited for the hanging retries"
    delivered = delivery_of(client, tenant, fine["id"])
    assert (delivered["status"], delivered["attempts"]) == ("delivered", 1)

