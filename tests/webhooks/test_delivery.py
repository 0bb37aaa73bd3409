"""Deliveries to a real HTTP receiver: signed, retried with backoff, logged, never text."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from app.core import uow
from app.core.models import utcnow
from app.webhooks import delivery
from tests.webhooks.helpers import (
    deliver_pending,
    receiver,
    register,
    remember,
    webhook_settings,
)

TEXT = "Keeps a pet iguana called Bartholomew in the bathtub."
SUBJECT = "user:iguana-keeper"


@pytest.fixture
def private_ok() -> Iterator[None]:
    with webhook_settings(allow_private="true", retry_seconds="[1, 1]"):
        yield


def _log(client: Any, tenant: dict[str, Any], hook: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/webhooks/{hook}/deliveries", headers=tenant["compliance"])
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def test_a_forget_is_delivered_signed_and_without_its_text(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    with receiver() as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, TEXT, subject=SUBJECT)
        assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
        assert deliver_pending(owner_conn) == ["delivered"]
        [received] = hooks.wait_for(1)
        [event] = hooks.verified(hook["secret"])
    assert received.path == "/hooks/lethe"
    assert event["type"] == "memory.forgotten"
    assert event["data"]["memory_id"] == memory_id
    for word in ("iguana", "Bartholomew", "bathtub", SUBJECT):
        assert word.encode() not in received.body, word
    assert received.headers["webhook-id"] == _log(client, tenant, hook["id"])[0]["id"]
    [logged] = _log(client, tenant, hook["id"])
    assert (logged["event"], logged["status"], logged["attempts"], logged["last_status_code"]) == (
        "memory.forgotten", "delivered", 1, 204)
    assert logged["next_attempt_at"] is None and logged["delivered_at"] is not None


def test_only_subscribed_webhooks_get_an_event(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    with receiver() as wanted, receiver() as other:
        hook = register(client, tenant, wanted.url, ["memory.forgotten"])
        register(client, tenant, other.url, ["erasure.completed"])
        memory_id = remember(client, tenant, TEXT)
        assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
        deliver_pending(owner_conn)
        assert len(wanted.wait_for(1)) == 1
        assert other.received == []
        assert len(_log(client, tenant, hook["id"])) == 1


def test_a_500_is_retried_after_the_backoff_and_both_attempts_are_logged(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    with receiver(answers=[500, 200]) as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, TEXT)
        assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
        assert deliver_pending(owner_conn) == ["pending"]
        [first] = _log(client, tenant, hook["id"])
        assert (first["status"], first["attempts"], first["last_status_code"]) == (
            "pending", 1, 500)
        assert first["last_error"] == "HTTP 500" and first["next_attempt_at"] is not None

        # A duplicate message before the retry is due sends nothing.
        assert deliver_pending(owner_conn) == [None]
        assert len(hooks.received) == 1
        time.sleep(1.2)
        assert deliver_pending(owner_conn) == ["delivered"]
        received = hooks.wait_for(2)
        events = hooks.verified(hook["secret"])
    assert received[0].body == received[1].body
    assert received[0].headers["webhook-id"] == received[1].headers["webhook-id"]
    assert events[0] == events[1]
    [second] = _log(client, tenant, hook["id"])
    assert (second["status"], second["attempts"], second["last_status_code"]) == (
        "delivered", 2, 200)
    # Redelivered after success: nothing more is sent.
    assert deliver_pending(owner_conn) == []


def test_a_delivery_fails_after_its_last_retry(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    with webhook_settings(allow_private="true", retry_seconds="[0.2]"), receiver(
            answers=[503]) as hooks:
        hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, TEXT)
        assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
        assert deliver_pending(owner_conn) == ["pending"]
        time.sleep(0.3)
        assert deliver_pending(owner_conn) == ["failed"]
        assert len(hooks.received) == 2
    [logged] = _log(client, tenant, hook["id"])
    assert (logged["status"], logged["attempts"], logged["next_attempt_at"]) == (
        "failed", 2, None)


def test_a_url_that_turned_private_is_refused_at_delivery(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    with receiver() as hooks:
        with webhook_settings(allow_private="true"):
            hook = register(client, tenant, hooks.url, ["memory.forgotten"])
        with webhook_settings(allow_private="false", retry_seconds="[1]"):
            memory_id = remember(client, tenant, TEXT)
            assert client.delete(f"/v1/memories/{memory_id}",
                                 headers=tenant["app"]).status_code == 204
            assert deliver_pending(owner_conn) == ["pending"]
        assert hooks.received == []
    [logged] = _log(client, tenant, hook["id"])
    assert logged["last_status_code"] is None
    assert logged["last_error"].startswith("refused")


def test_a_receiver_that_is_down_is_retried(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    with receiver() as hooks:
        url = hooks.url
    hook = register(client, tenant, url, ["memory.forgotten"])  # nobody listens there now
    memory_id = remember(client, tenant, TEXT)
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
    assert deliver_pending(owner_conn) == ["pending"]
    [logged] = _log(client, tenant, hook["id"])
    assert logged["last_error"] == "connection failed" and logged["attempts"] == 1


def test_the_sweep_finds_retries_whose_message_was_lost(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    register(client, tenant, "http://127.0.0.1:9/unused", ["erasure.completed"])
    hook = register(client, tenant, "http://127.0.0.1:9/down", ["memory.forgotten"])
    memory_id = remember(client, tenant, TEXT)
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
    assert deliver_pending(owner_conn) == ["pending"]
    [logged] = _log(client, tenant, hook["id"])
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        assert delivery.due(session, tenant_id=tenant_id, before=utcnow()) == []
        late = utcnow() + timedelta(minutes=5)
        assert [str(i) for i in delivery.due(session, tenant_id=tenant_id, before=late)] == [
            logged["id"]]


def test_event_bodies_are_json_with_type_timestamp_and_data(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    with receiver() as hooks:
        register(client, tenant, hooks.url, ["memory.forgotten"])
        memory_id = remember(client, tenant, TEXT)
        client.post(f"/v1/memories/{memory_id}/forget", json={"about": "my pet"},
                    headers=tenant["app"])
        deliver_pending(owner_conn)
        [received] = hooks.wait_for(1)
    body = json.loads(received.body)
    assert set(body) == {"type", "timestamp", "data"}
    assert set(body["data"]) == {"memory_id", "forgotten_at"}
    assert received.headers["content-type"] == "application/json"
