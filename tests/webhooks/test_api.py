"""The webhook registry: compliance only, secrets shown once, URLs checked against SSRF."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.webhooks import addresses
from tests.webhooks.helpers import register, webhook_settings

URL = "https://hooks.example.com/lethe"
EVENTS = ["memory.forgotten", "artifact.erase_requested"]
REFUSED = "https://lethe.dev/problems/webhook-url-refused"


@pytest.fixture
def public_only() -> Iterator[None]:
    with webhook_settings(allow_private="false"):
        yield


@pytest.fixture
def private_ok() -> Iterator[None]:
    with webhook_settings(allow_private="true"):
        yield


def test_registering_shows_the_secret_once(
    client: Any, tenant: dict[str, Any], private_ok: None
) -> None:
    headers = {**tenant["compliance"], "Idempotency-Key": "hook-1"}
    body = {"url": "http://127.0.0.1:9/hook", "events": EVENTS}
    first = client.post("/v1/webhooks", json=body, headers=headers)
    assert first.status_code == 201, first.text
    created = first.json()
    assert created["secret"].startswith("whsec_") and len(created["secret"]) > 40
    assert created["events"] == EVENTS and created["url"] == body["url"]

    replay = client.post("/v1/webhooks", json=body, headers=headers)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["id"] == created["id"] and replay.json()["secret"] is None

    listed = client.get("/v1/webhooks", headers=tenant["compliance"]).json()["data"]
    assert [hook["id"] for hook in listed] == [created["id"]]
    assert "secret" not in listed[0]
    read = client.get(f"/v1/webhooks/{created['id']}", headers=tenant["compliance"]).json()
    assert "secret" not in read


def test_the_secret_is_stored_nowhere(
    client: Any, tenant: dict[str, Any], owner_conn: Any, private_ok: None
) -> None:
    secret = register(client, tenant, "http://127.0.0.1:9/hook", EVENTS)["secret"]
    bare = secret.removeprefix("whsec_")
    for table in ("webhook", "operation", "audit_event"):
        dump = " ".join(row[0] for row in owner_conn.execute(f"SELECT t::text FROM {table} t"))
        assert bare not in dump, table


def test_an_app_key_gets_403_on_every_webhook_endpoint(
    client: Any, tenant: dict[str, Any], private_ok: None
) -> None:
    hook = register(client, tenant, "http://127.0.0.1:9/hook", EVENTS)["id"]
    app = tenant["app"]
    assert client.post("/v1/webhooks", json={"url": URL, "events": EVENTS},
                       headers=app).status_code == 403
    assert client.get("/v1/webhooks", headers=app).status_code == 403
    assert client.get(f"/v1/webhooks/{hook}", headers=app).status_code == 403
    assert client.get(f"/v1/webhooks/{hook}/deliveries", headers=app).status_code == 403
    assert client.delete(f"/v1/webhooks/{hook}", headers=app).status_code == 403
    assert client.get(f"/v1/webhooks/{hook}", headers=tenant["compliance"]).status_code == 200


def test_another_tenant_gets_404(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], private_ok: None
) -> None:
    hook = register(client, tenant, "http://127.0.0.1:9/hook", EVENTS)["id"]
    other = other_tenant["compliance"]
    assert client.get(f"/v1/webhooks/{hook}", headers=other).status_code == 404
    assert client.get(f"/v1/webhooks/{hook}/deliveries", headers=other).status_code == 404
    assert client.delete(f"/v1/webhooks/{hook}", headers=other).status_code == 404
    assert client.get("/v1/webhooks", headers=other).json()["data"] == []
    assert client.get(f"/v1/webhooks/{hook}", headers=tenant["compliance"]).status_code == 200


def test_deleting_a_webhook_is_audited(
    client: Any, tenant: dict[str, Any], private_ok: None
) -> None:
    hook = register(client, tenant, "http://127.0.0.1:9/hook", EVENTS)["id"]
    assert client.delete(f"/v1/webhooks/{hook}",
                         headers=tenant["compliance"]).status_code == 204
    assert client.get(f"/v1/webhooks/{hook}", headers=tenant["compliance"]).status_code == 404
    events = client.get(f"/v1/audit?target_id={hook}",
                        headers=tenant["compliance"]).json()["data"]
    assert [e["action"] for e in events] == ["webhook.registered", "webhook.deleted"]
    assert all(e["actor"].startswith("key:") for e in events)


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/hook",
    "http://10.0.0.1/hook",
    "https://169.254.169.254/latest/meta-data",
    "http://[::1]:8080/hook",
    "http://localhost:8080/hook",  # a name that resolves to loopback
    "http://[::ffff:127.0.0.1]/hook",
    "http://0.0.0.0/hook",
    "http://224.0.0.1/hook",
    "http://192.168.1.20/hook",
    "http://100.64.0.1/hook",
])
def test_urls_reaching_inside_the_network_are_refused(
    client: Any, tenant: dict[str, Any], public_only: None, url: str
) -> None:
    response = client.post("/v1/webhooks", json={"url": url, "events": EVENTS},
                           headers=tenant["compliance"])
    assert response.status_code == 422, response.text
    assert response.json()["type"] == REFUSED
    assert client.get("/v1/webhooks", headers=tenant["compliance"]).json()["data"] == []


@pytest.mark.parametrize("url", [
    "ftp://hooks.example.com/x", "file:///etc/passwd", "gopher://127.0.0.1/", "hooks.example.com",
    "http://[::1/hook", "http://hooks.example.com:99999/",
])
def test_only_http_urls_are_accepted(
    client: Any, tenant: dict[str, Any], public_only: None, url: str
) -> None:
    response = client.post("/v1/webhooks", json={"url": url, "events": EVENTS},
                           headers=tenant["compliance"])
    assert response.status_code == 422, response.text


def test_credentials_in_the_url_and_unknown_events_are_refused(
    client: Any, tenant: dict[str, Any], private_ok: None
) -> None:
    headers = tenant["compliance"]
    with_password = client.post("/v1/webhooks", headers=headers, json={
        "url": "http://user:pw@127.0.0.1/hook", "events": EVENTS})
    assert with_password.status_code == 422 and with_password.json()["type"] == REFUSED
    unknown = client.post("/v1/webhooks", headers=headers, json={
        "url": "http://127.0.0.1/hook", "events": ["memory.created"]})
    assert unknown.status_code == 422
    empty = client.post("/v1/webhooks", headers=headers, json={
        "url": "http://127.0.0.1/hook", "events": []})
    assert empty.status_code == 422


def test_every_resolved_address_must_be_public() -> None:
    assert addresses.is_public("93.184.215.14")
    assert addresses.is_public("2606:4700:4700::1111")
    for address in ("127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.0.1", "169.254.169.254",
                    "::1", "fe80::1%eth0", "fc00::1", "::ffff:10.0.0.1", "2002:7f00:1::",
                    "0.0.0.0", "255.255.255.255", "240.0.0.1", "ff02::1", "100.64.0.1"):
        assert not addresses.is_public(address), address
