from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.idempotency import service as idempotency

REPLAYED = "Idempotent-Replayed"


def _patch(client: Any, headers: dict[str, str], key: str | None, body: dict[str, Any]) -> Any:
    extra = {"Idempotency-Key": key} if key is not None else {}
    return client.patch("/v1/settings", json=body, headers={**headers, **extra})


def test_replay_returns_first_answer_and_changes_nothing(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = _patch(client, tenant["compliance"], "k-1", {"half_lives": {"situational": 3}})
    assert first.status_code == 200
    assert REPLAYED not in first.headers
    # A later change without the key, then the replay: the replay must not undo it.
    later = _patch(client, tenant["compliance"], None, {"half_lives": {"situational": 5}})
    assert later.status_code == 200
    replay = _patch(client, tenant["compliance"], "k-1", {"half_lives": {"situational": 3}})
    assert replay.status_code == 200
    assert replay.headers[REPLAYED] == "true"
    assert replay.json() == first.json()
    current = client.get("/v1/settings", headers=tenant["app"]).json()
    assert current["half_lives"]["situational"] == 5


def test_same_key_other_request_is_refused(client: Any, tenant: dict[str, Any]) -> None:
    assert _patch(client, tenant["compliance"], "k-2", {"detect_forget_requests": True}).is_success
    other = _patch(client, tenant["compliance"], "k-2", {"detect_forget_requests": False})
    assert other.status_code == 422
    assert other.json()["type"] == "https://lethe.dev/problems/idempotency-key-reused"
    assert client.get("/v1/settings", headers=tenant["app"]).json()["detect_forget_requests"]


def test_key_order_of_body_does_not_matter(client: Any, tenant: dict[str, Any]) -> None:
    body = {"half_lives": {"structural": 100, "situational": 2}}
    assert _patch(client, tenant["compliance"], "k-3", body).status_code == 200
    reordered = client.patch(
        "/v1/settings",
        content=b'{"half_lives": {"situational": 2, "structural": 100}}',
        headers={**tenant["compliance"], "Idempotency-Key": "k-3",
                 "Content-Type": "application/json"},
    )
    assert reordered.status_code == 200
    assert reordered.headers[REPLAYED] == "true"


def test_keys_are_scoped_per_tenant(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    a = _patch(client, tenant["compliance"], "shared", {"retention": {"deprecated_days": 1}})
    b = _patch(client, other_tenant["compliance"], "shared", {"retention": {"deprecated_days": 9}})
    assert a.status_code == b.status_code == 200
    assert REPLAYED not in b.headers
    assert client.get("/v1/settings", headers=other_tenant["app"]).json()["retention"][
        "deprecated_days"] == 9


def test_request_in_flight_gets_409(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    lock_key = f"idempotency:{tenant['id']}:busy"
    owner_conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (lock_key,))
    try:
        busy = _patch(client, tenant["compliance"], "busy", {"detect_forget_requests": True})
    finally:
        owner_conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock_key,))
    assert busy.status_code == 409
    assert busy.json()["type"] == "https://lethe.dev/problems/idempotency-in-progress"
    assert not client.get("/v1/settings", headers=tenant["app"]).json()["detect_forget_requests"]
    assert _patch(client, tenant["compliance"], "busy", {"detect_forget_requests": True}).is_success


def test_concurrent_requests_with_one_key_execute_once(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    barrier = threading.Barrier(8)

    def fire(_: int) -> Any:
        barrier.wait()
        return _patch(client, tenant["compliance"], "race", {"half_lives": {"procedural": 42}})

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(fire, range(8)))
    statuses = sorted(r.status_code for r in responses)
    executed = [r for r in responses if r.status_code == 200 and REPLAYED not in r.headers]
    assert len(executed) == 1, statuses
    assert set(statuses) <= {200, 409}
    count = owner_conn.execute(
        "SELECT count(*) FROM operation WHERE idempotency_key = 'race'"
    ).fetchone()[0]
    assert count == 1


def test_invalid_keys_are_refused(client: Any, tenant: dict[str, Any]) -> None:
    for key in ("", "x" * 256):
        response = _patch(client, tenant["compliance"], key, {"detect_forget_requests": True})
        assert response.status_code == 422, key
        assert response.json()["type"] in (
            "https://lethe.dev/problems/invalid-idempotency-key",
            "https://lethe.dev/problems/validation-error",
        )
    assert _patch(client, tenant["compliance"], "x" * 255, {}).status_code == 200


def test_expired_record_no_longer_replays(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    assert _patch(client, tenant["compliance"], "old", {"detect_forget_requests": True}).is_success
    owner_conn.execute("UPDATE operation SET expires_at = now() - interval '1 second'")
    fresh = _patch(client, tenant["compliance"], "old", {"detect_forget_requests": False})
    assert fresh.status_code == 200
    assert REPLAYED not in fresh.headers


def test_failed_request_is_not_recorded(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    bad = _patch(client, tenant["compliance"], "bad", {"half_lives": {"structural": -1}})
    assert bad.status_code == 422
    assert owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 0


def test_tenant_creation_replay_shows_no_keys(
    client: Any, admin_headers: dict[str, str]
) -> None:
    headers = {**admin_headers, "Idempotency-Key": "tenant-1"}
    first = client.post("/v1/tenants", json={"name": "Acme"}, headers=headers)
    assert first.status_code == 201
    replay = client.post("/v1/tenants", json={"name": "Acme"}, headers=headers)
    assert replay.status_code == 201
    assert replay.headers[REPLAYED] == "true"
    assert replay.json() == {**first.json(), "api_keys": None}
    other = client.post("/v1/tenants", json={"name": "Other"}, headers=headers)
    assert other.status_code == 422


def test_derived_ids_are_stable_and_tenant_scoped() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    assert idempotency.derive_id(a, "k", "memory") == idempotency.derive_id(a, "k", "memory")
    assert idempotency.derive_id(a, "k", "memory") != idempotency.derive_id(b, "k", "memory")
    assert idempotency.derive_id(a, "k", "memory") != idempotency.derive_id(a, "k2", "memory")


def test_operation_record_is_readable_only_by_its_tenant(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    _patch(client, tenant["compliance"], "op", {"detect_forget_requests": True})
    op_id = owner_conn.execute("SELECT id FROM operation").fetchone()[0]
    mine = client.get(f"/v1/operations/{op_id}", headers=tenant["app"])
    assert mine.status_code == 200
    assert mine.json()["status"] == "succeeded"
    theirs = client.get(f"/v1/operations/{op_id}", headers=other_tenant["app"])
    assert theirs.status_code == 404
    missing = client.get(f"/v1/operations/{uuid.uuid4()}", headers=tenant["app"])
    assert missing.status_code == 404
    assert theirs.json()["detail"] == missing.json()["detail"]
