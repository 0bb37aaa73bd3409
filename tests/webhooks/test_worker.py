"""Webhook deliveries through a real Celery worker on the embedded broker: a receiver that
answers 500 once gets the event again within a minute, signed the same way."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.core.runtime import get_runtime
from tests.core.test_celery_worker import worker
from tests.webhooks.helpers import receiver, register, remember, webhook_settings

pytestmark = pytest.mark.slow


def test_a_receiver_that_fails_once_gets_the_event_again_within_a_minute(
    client: Any, tenant: dict[str, Any]
) -> None:
    with webhook_settings(allow_private="true", retry_seconds="[2, 2]"), receiver(
            answers=[500, 204]) as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, "Feeds the neighbour's tortoise on Fridays.")
        with worker(get_runtime().broker_url, "celery") as process:
            assert client.delete(f"/v1/memories/{memory_id}",
                                 headers=tenant["app"]).status_code == 204
            first, second = hooks.wait_for(2, timeout=90)
            arrived = time.monotonic()
            deadline = arrived + 30
            logged: dict[str, Any] = {}
            while time.monotonic() < deadline:
                logged = client.get(f"/v1/webhooks/{hook['id']}/deliveries",
                                    headers=tenant["compliance"]).json()["data"][0]
                if logged["status"] == "delivered":
                    break
                assert process.poll() is None, "the worker died"
                time.sleep(0.2)
        events = hooks.verified(hook["secret"])
    assert [event["data"]["memory_id"] for event in events] == [memory_id, memory_id]
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == logged["id"]
    assert int(second.headers["webhook-timestamp"]) - int(first.headers["webhook-timestamp"]) < 60
    assert (logged["status"], logged["attempts"], logged["last_status_code"]) == (
        "delivered", 2, 204)
    assert b"tortoise" not in first.body + second.body
