"""Limits: a key past its rate gets 429 with Retry-After, a tenant past its quotas gets a
problem, every answer names its request, and no log line carries memory text."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from app.core import db, logs, uow
from app.limits import service as limits
from app.tenant_settings import service as tenant_settings
from app.tenant_settings.schemas import Limits

PROBLEM = "application/problem+json"


@pytest.fixture(autouse=True)
def _fresh_limits() -> Iterator[None]:
    limits.forget_cached()
    yield
    limits.forget_cached()


def _set_limits(client: Any, tenant: dict[str, Any], **values: Any) -> None:
    response = client.patch("/v1/settings", json={"limits": values}, headers=tenant["compliance"])
    assert response.status_code == 200, response.text
    assert response.json()["limits"] == {**Limits().model_dump(), **values}


def _problem(response: Any, status: int, slug: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["type"] == f"https://lethe.dev/problems/{slug}"
    return body


def test_a_key_past_its_rate_gets_429_with_retry_after(
    client: Any, tenant: dict[str, Any]
) -> None:
    _set_limits(client, tenant, rate_limit="on", requests_per_minute=3)
    answers = [client.get("/v1/memories", headers=tenant["app"]) for _ in range(4)]
    assert [a.status_code for a in answers[:3]] == [200, 200, 200]
    _problem(answers[3], 429, "rate-limited")
    assert 1 <= int(answers[3].headers["Retry-After"]) <= 20
    # Per key: the tenant's other key has a bucket of its own.
    assert client.get("/v1/settings", headers=tenant["compliance"]).status_code == 200


def test_a_rate_limited_write_changes_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    _set_limits(client, tenant, rate_limit="on", requests_per_minute=1)
    first = client.post("/v1/memories", json={"subject": "user:1", "text": "Likes tea"},
                        headers=tenant["app"])
    assert first.status_code == 201
    second = client.post("/v1/memories", json={"subject": "user:1", "text": "Likes coffee"},
                         headers=tenant["app"])
    _problem(second, 429, "rate-limited")
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 1


def test_rate_limiting_is_off_by_default_outside_production(
    client: Any, tenant: dict[str, Any]
) -> None:
    _set_limits(client, tenant, requests_per_minute=2)
    statuses = {client.get("/v1/memories", headers=tenant["app"]).status_code for _ in range(6)}
    assert statuses == {200}


def test_other_tenants_are_not_limited_by_one_tenants_rate(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    _set_limits(client, tenant, rate_limit="on", requests_per_minute=1)
    client.get("/v1/memories", headers=tenant["app"])
    assert client.get("/v1/memories", headers=tenant["app"]).status_code == 429
    assert client.get("/v1/memories", headers=other_tenant["app"]).status_code == 200


def test_a_tenant_past_its_memory_quota_gets_409_until_it_forgets(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    _set_limits(client, tenant, max_memories=2)
    ids = []
    for text in ("Lives in Oslo", "Likes tea"):
        response = client.post("/v1/memories", json={"subject": "user:1", "text": text,
                                                     "key": text.split()[0].lower()},
                               headers=tenant["app"])
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    third = client.post("/v1/memories", json={"subject": "user:1", "text": "Owns a cat"},
                        headers=tenant["app"])
    assert _problem(third, 409, "memory-quota-exceeded")["quota"] == 2
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 2
    # A new version of a slot adds no memory.
    slot = client.post("/v1/memories", json={"subject": "user:1", "text": "Lives in Bergen",
                                             "key": "lives"}, headers=tenant["app"])
    assert slot.status_code == 200, slot.text
    assert client.delete(f"/v1/memories/{ids[1]}", headers=tenant["app"]).status_code == 204
    again = client.post("/v1/memories", json={"subject": "user:1", "text": "Owns a cat"},
                        headers=tenant["app"])
    assert again.status_code == 201


def test_a_write_whose_cached_limits_expired_takes_no_second_connection(
    client: Any, tenant: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every read of the limits misses the cache, as when the entry expires between a
    # request's authentication and its quota check: the check must read through the
    # request's transaction. A second pooled connection taken while the first is held lets a
    # pool's worth of requests wait on each other until the pool times out (503s).
    monkeypatch.setattr(limits, "SETTINGS_TTL_SECONDS", 0.0)
    engine = db.app_engine()
    held = {"now": 0, "most": 0}

    def checkout(*_: Any) -> None:
        held["now"] += 1
        held["most"] = max(held["most"], held["now"])

    def checkin(*_: Any) -> None:
        held["now"] -= 1

    event.listen(engine, "checkout", checkout)
    event.listen(engine, "checkin", checkin)
    try:
        response = client.post("/v1/memories", json={"subject": "user:1", "text": "Likes tea"},
                               headers=tenant["app"])
    finally:
        event.remove(engine, "checkout", checkout)
        event.remove(engine, "checkin", checkin)
    assert response.status_code == 201, response.text
    assert held["most"] == 1


def test_stale_limits_are_read_through_the_callers_transaction(tenant: dict[str, Any]) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        row = tenant_settings._row(session, tenant_id)
        row.limits = {**row.limits, "max_memories": 7}
        session.flush()
        # Uncommitted: only this transaction's own connection can see it.
        assert limits.memory_quota(session, tenant_id=tenant_id) == 7
        session.rollback()
    limits.forget_cached()
    assert limits.limits_for(tenant_id).max_memories == Limits().max_memories


def test_an_ingest_payload_past_the_tenants_quota_is_413(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    _set_limits(client, tenant, max_ingest_bytes=300)
    big = {"subject": "user:1", "memories": [{"text": "Likes tea " * 40}]}
    response = client.post("/v1/ingest", json=big,
                           headers={**tenant["app"], "Idempotency-Key": uuid.uuid4().hex})
    _problem(response, 413, "ingest-too-large")
    assert owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 0
    small = {"subject": "user:1", "memories": [{"text": "Likes tea"}]}
    accepted = client.post("/v1/ingest", json=small,
                           headers={**tenant["app"], "Idempotency-Key": uuid.uuid4().hex})
    assert accepted.status_code == 202, accepted.text


def test_limits_refuse_values_out_of_bounds(client: Any, tenant: dict[str, Any]) -> None:
    for limits_body in ({"requests_per_minute": 0}, {"max_memories": -1},
                        {"rate_limit": "sometimes"}, {"max_ingest_bytes": 2**31}):
        response = client.patch("/v1/settings", json={"limits": limits_body},
                                headers=tenant["compliance"])
        _problem(response, 422, "validation-error")


def test_every_answer_carries_a_request_id(client: Any, tenant: dict[str, Any]) -> None:
    generated = client.get("/v1/memories", headers=tenant["app"]).headers["X-Request-ID"]
    assert logs.SANE_ID.match(generated)
    refused = client.get("/v1/memories")
    assert refused.status_code == 401
    assert refused.headers["X-Request-ID"] not in ("", generated)
    honoured = client.get("/v1/memories", headers={**tenant["app"], "X-Request-ID": "req-42.a"})
    assert honoured.headers["X-Request-ID"] == "req-42.a"
    for insane in (b"has space", b"x" * 200, b"caf\xc3\xa9", b"a\"b"):
        replaced = client.get("/v1/memories", headers={**tenant["app"], "X-Request-ID": insane})
        assert replaced.headers["X-Request-ID"].encode() != insane
        assert logs.SANE_ID.match(replaced.headers["X-Request-ID"])


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(logs.JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def captured() -> Iterator[_Lines]:
    handler = _Lines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_no_log_line_carries_memory_text(
    client: Any, tenant: dict[str, Any], captured: _Lines
) -> None:
    texts = ["Zanzibar-Quokka keeps a diary", "Zanzibar-Quokka now keeps two diaries",
             "Vermilion-Okapi fears thunder"]
    app = tenant["app"]
    first = client.post("/v1/memories", json={"subject": "user:7", "text": texts[0],
                                              "metadata": {"note": "Lapis-Heron"}},
                        headers={**app, "X-Request-ID": "session-write"}).json()
    client.patch(f"/v1/memories/{first['id']}", json={"text": texts[1]},
                 headers={**app, "If-Match": f'"{first["revision"]}"'})
    client.post("/v1/memories", json={"subject": "user:7", "text": texts[2]}, headers=app)
    client.post("/v1/memories", json={"subject": "user:7", "text": ""}, headers=app)  # a 422
    client.post("/v1/recall", json={"subject": "user:7", "query": "Zanzibar-Quokka diary"},
                headers=app)
    client.post("/v1/forget", json={"subject": "user:7", "about": "Vermilion-Okapi thunder"},
                headers=app)
    client.post(f"/v1/memories/{first['id']}/forget", json={}, headers=app)
    client.post("/v1/ingest", json={"subject": "user:7", "memories": [{"text": texts[0]}]},
                headers={**app, "Idempotency-Key": uuid.uuid4().hex})
    assert captured.lines, "the session logged nothing"
    words = ["Zanzibar", "Quokka", "Vermilion", "Okapi", "Lapis-Heron", "diary", "thunder"]
    leaking = [line for line in captured.lines if any(w in line for w in words)]
    assert leaking == []
    requests = [json.loads(line) for line in captured.lines if '"logger": "lethe.request"' in line]
    assert {r.get("request_id") for r in requests} >= {"session-write"}
    assert all({"method", "route", "status", "duration_ms"} <= r.keys() for r in requests)


def test_rate_limiting_defaults_to_on_in_production(monkeypatch: Any) -> None:
    from app.core.config import get_settings

    settings = get_settings().model_copy(update={"environment": "production"})
    monkeypatch.setattr(limits, "get_settings", lambda: settings)
    assert limits.rate_limited(Limits())
    assert not limits.rate_limited(Limits(rate_limit="off"))
