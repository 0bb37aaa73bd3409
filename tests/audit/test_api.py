"""GET /v1/audit and GET /v1/audit/verify: compliance keys only, tenant-scoped."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any

from app.audit import chain
from tests.audit.helpers import append, tamper

FIELDS = {"seq", "actor", "action", "target_kind", "target_id", "from_state", "to_state",
          "reason", "details", "created_at", "prev_hash", "hash"}


def test_list_shows_events_oldest_first(client: Any, tenant: dict[str, Any]) -> None:
    target = str(uuid.uuid4())
    append(tenant["id"], 3, target_id=target, from_state="active", to_state="suspect",
           details={"flags": ["contradicted"]})
    response = client.get("/v1/audit", headers=tenant["compliance"])
    assert response.status_code == 200
    body = response.json()
    assert body["next_cursor"] is None
    assert [e["seq"] for e in body["data"]] == [1, 2, 3]
    first = body["data"][0]
    assert set(first) == FIELDS
    assert (first["target_id"], first["from_state"], first["to_state"], first["details"]) == (
        target, "active", "suspect", {"flags": ["contradicted"]})


def test_filter_by_target_id(client: Any, tenant: dict[str, Any]) -> None:
    wanted, other = str(uuid.uuid4()), str(uuid.uuid4())
    append(tenant["id"], 2, target_id=wanted)
    append(tenant["id"], 2, target_id=other)
    append(tenant["id"], 1, target_id=wanted)
    body = client.get("/v1/audit", params={"target_id": wanted},
                      headers=tenant["compliance"]).json()
    assert [e["seq"] for e in body["data"]] == [1, 2, 5]
    assert {e["target_id"] for e in body["data"]} == {wanted}


def test_pagination_walks_every_event_once(client: Any, tenant: dict[str, Any]) -> None:
    target = str(uuid.uuid4())
    append(tenant["id"], 7, target_id=target)
    append(tenant["id"], 1)
    seen: list[int] = []
    cursor = None
    for _ in range(10):
        params: dict[str, Any] = {"limit": 3, "target_id": target}
        if cursor is not None:
            params["cursor"] = cursor
        body = client.get("/v1/audit", params=params, headers=tenant["compliance"]).json()
        assert len(body["data"]) <= 3
        seen += [e["seq"] for e in body["data"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == [1, 2, 3, 4, 5, 6, 7]


def test_bad_list_parameters_are_422(client: Any, tenant: dict[str, Any]) -> None:
    for params in ({"limit": 0}, {"limit": 201}, {"cursor": "not-a-cursor"},
                   {"cursor": "eyJhZnRlciI6IC0xfQ"}, {"target": "x"}):
        response = client.get("/v1/audit", params=params, headers=tenant["compliance"])
        assert response.status_code == 422, params
        assert response.headers["content-type"].startswith("application/problem+json")


def test_verify_endpoint_reports_ok_and_head(client: Any, tenant: dict[str, Any]) -> None:
    written = append(tenant["id"], 5)
    response = client.get("/v1/audit/verify", headers=tenant["compliance"])
    assert response.status_code == 200
    assert response.json() == {"ok": True, "events": 5, "head": written[-1]["hash"],
                               "first_bad_seq": None}


def test_verify_endpoint_reports_tampering(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    append(tenant["id"], 5)
    tamper(owner_conn, ("UPDATE audit_event SET to_state = 'active' "
                        "WHERE tenant_id = %s AND seq = 4", (tenant["id"],)))
    body = client.get("/v1/audit/verify", headers=tenant["compliance"]).json()
    assert (body["ok"], body["events"], body["first_bad_seq"]) == (False, 5, 4)


def test_listed_events_let_anyone_recompute_the_chain(
    client: Any, tenant: dict[str, Any]
) -> None:
    append(tenant["id"], 4, details={"count": 3, "ratio": 0.5})
    events = client.get("/v1/audit", headers=tenant["compliance"]).json()["data"]
    prev = "0" * 64
    for event in events:
        fields = {k: event[k] for k in FIELDS - {"hash", "created_at"}}
        fields["created_at"] = chain.timestamp(datetime.fromisoformat(event["created_at"]))
        fields["tenant_id"] = tenant["id"]
        assert event["prev_hash"] == prev
        assert hashlib.sha256(chain.canonical(fields)).hexdigest() == event["hash"]
        prev = event["hash"]


def test_app_key_is_forbidden_and_no_key_unauthorized(
    client: Any, tenant: dict[str, Any]
) -> None:
    for path in ("/v1/audit", "/v1/audit/verify"):
        assert client.get(path, headers=tenant["app"]).status_code == 403
        assert client.get(path).status_code == 401
