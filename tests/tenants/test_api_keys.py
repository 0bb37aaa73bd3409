"""`/v1/api-keys`: keys created, listed and deleted; the last compliance key stays."""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from datetime import datetime
from typing import Any

import pytest

from app.core import uow
from app.tenants import keys
from app.tenants.errors import LastComplianceKey

PROBLEMS = "https://lethe.dev/problems/"


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _listed(client: Any, tenant: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.get("/v1/api-keys", headers=tenant["compliance"])
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def _key_id(client: Any, tenant: dict[str, Any], role: str) -> str:
    return next(k["id"] for k in _listed(client, tenant) if k["role"] == role)


def test_a_new_key_is_shown_once_stored_hashed_and_works(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    headers = {**tenant["compliance"], "Idempotency-Key": "new-app-key"}
    created = client.post("/v1/api-keys", json={"role": "app"}, headers=headers)
    assert created.status_code == 201, created.text
    body = created.json()
    key = body["key"]
    assert key.startswith(f"{body['prefix']}_app_")
    assert set(body) == {"id", "role", "prefix", "created_at", "key"}
    assert client.get("/v1/settings", headers=_bearer(key)).status_code == 200

    replay = client.post("/v1/api-keys", json={"role": "app"}, headers=headers)
    assert replay.status_code == 201 and replay.json() == {**body, "key": None}

    (key_hash,) = owner_conn.execute(
        "SELECT key_hash FROM api_key WHERE id = %s", (body["id"],)).fetchone()
    assert key_hash == hashlib.sha256(key.encode()).hexdigest()
    everything = " ".join(str(row[0]) for table in ("api_key", "operation", "audit_event")
                          for row in owner_conn.execute(f"SELECT t::text FROM {table} t"))
    assert key not in everything


def test_the_list_shows_working_keys_without_secrets(client: Any, tenant: dict[str, Any]
                                                     ) -> None:
    client.post("/v1/api-keys", json={"role": "compliance"}, headers=tenant["compliance"])
    listed = _listed(client, tenant)
    assert sorted(k["role"] for k in listed) == ["app", "compliance", "compliance"]
    for key in listed:
        assert set(key) == {"id", "role", "prefix", "created_at", "last_used_at"}
    page = client.get("/v1/api-keys?limit=2", headers=tenant["compliance"]).json()
    rest = client.get(f"/v1/api-keys?limit=2&cursor={page['next_cursor']}",
                      headers=tenant["compliance"]).json()
    assert [k["id"] for k in page["data"] + rest["data"]] == [k["id"] for k in listed]
    assert rest["next_cursor"] is None


def test_two_keys_of_one_role_have_different_prefixes_each_the_start_of_its_key(
    client: Any, tenant: dict[str, Any]
) -> None:
    created = [client.post("/v1/api-keys", json={"role": "compliance"},
                           headers=tenant["compliance"]).json() for _ in range(2)]
    assert created[0]["prefix"] != created[1]["prefix"]
    listed = {key["id"]: key["prefix"] for key in _listed(client, tenant)}
    for key in created:
        assert key["key"].startswith(key["prefix"])
        assert uuid.UUID(key["id"]).hex[:8] in key["prefix"]  # the key's own ID
        assert listed[key["id"]] == key["prefix"]


def test_a_key_of_the_earlier_format_still_authenticates(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    """Keys made when the prefix was `lethe_<role>` and no ID: only the hash authenticates."""
    old_key = "lethe_compliance_" + "x" * 43
    owner_conn.execute(
        "INSERT INTO api_key (id, tenant_id, role, key_hash, prefix, created_at)"
        " VALUES (%s, %s, 'compliance', %s, %s, now())",
        (uuid.uuid4(), tenant["id"], hashlib.sha256(old_key.encode()).hexdigest(),
         old_key[:16]))
    assert client.get("/v1/api-keys", headers=_bearer(old_key)).status_code == 200


def test_a_deleted_key_stops_working_at_once_and_its_record_stays(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    app_id = _key_id(client, tenant, "app")
    assert client.get("/v1/settings", headers=tenant["app"]).status_code == 200
    assert client.delete(f"/v1/api-keys/{app_id}", headers=tenant["compliance"]).status_code \
        == 204
    refused = client.get("/v1/settings", headers=tenant["app"])
    assert refused.status_code == 401
    assert client.post("/v1/memories", json={"subject": "u", "text": "x"},
                       headers=tenant["app"]).status_code == 401
    assert app_id not in [k["id"] for k in _listed(client, tenant)]
    (revoked_at,) = owner_conn.execute(
        "SELECT revoked_at FROM api_key WHERE id = %s", (app_id,)).fetchone()
    assert revoked_at is not None
    # Deleting it again changes nothing.
    assert client.delete(f"/v1/api-keys/{app_id}", headers=tenant["compliance"]).status_code \
        == 204


def test_rotation_creates_the_new_key_then_deletes_the_old(
    client: Any, tenant: dict[str, Any]
) -> None:
    old_id = _key_id(client, tenant, "compliance")
    new = client.post("/v1/api-keys", json={"role": "compliance"},
                      headers=tenant["compliance"]).json()
    deleted = client.delete(f"/v1/api-keys/{old_id}", headers=_bearer(new["key"]))
    assert deleted.status_code == 204
    assert client.get("/v1/api-keys", headers=tenant["compliance"]).status_code == 401
    assert [k["id"] for k in client.get("/v1/api-keys", headers=_bearer(new["key"])
                                        ).json()["data"] if k["role"] == "compliance"] \
        == [new["id"]]


def test_the_last_compliance_key_is_refused_and_keeps_working(
    client: Any, tenant: dict[str, Any]
) -> None:
    only = _key_id(client, tenant, "compliance")
    refused = client.delete(f"/v1/api-keys/{only}", headers=tenant["compliance"])
    assert refused.status_code == 409
    assert refused.json()["type"] == PROBLEMS + "last-compliance-key"
    assert client.get("/v1/api-keys", headers=tenant["compliance"]).status_code == 200
    assert only in [k["id"] for k in _listed(client, tenant)]


def test_two_deletions_of_the_last_two_compliance_keys_leave_one(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = _key_id(client, tenant, "compliance")
    second = client.post("/v1/api-keys", json={"role": "compliance"},
                         headers=tenant["compliance"]).json()["id"]
    tenant_id = uuid.UUID(tenant["id"])
    outcome: list[BaseException | None] = []

    def delete_second() -> None:
        try:
            with uow.unit_of_work(tenant_id) as session:
                keys.revoke(session, tenant_id=tenant_id, key_id=uuid.UUID(second),
                            actor="admin")
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    with uow.unit_of_work(tenant_id) as session:
        keys.revoke(session, tenant_id=tenant_id, key_id=uuid.UUID(first), actor="admin")
        racer = threading.Thread(target=delete_second)
        racer.start()
        time.sleep(0.5)
        assert racer.is_alive(), "the second deletion must wait for the first"
    racer.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], LastComplianceKey)
    with uow.unit_of_work(tenant_id) as session:
        working = keys.working_keys(session, tenant_id=tenant_id, limit=10).data
    assert [str(k.id) for k in working if k.role.value == "compliance"] == [second]


def test_last_used_at_is_stamped_when_a_key_authenticates_at_most_once_a_minute(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    created = client.post("/v1/api-keys", json={"role": "app"},
                          headers=tenant["compliance"]).json()
    fresh = next(k for k in _listed(client, tenant) if k["id"] == created["id"])
    assert fresh["last_used_at"] is None
    assert client.get("/v1/settings", headers=_bearer(created["key"])).status_code == 200
    used = next(k for k in _listed(client, tenant) if k["id"] == created["id"])
    assert used["last_used_at"] is not None
    stamped = datetime.fromisoformat(used["last_used_at"])
    assert client.get("/v1/settings", headers=_bearer(created["key"])).status_code == 200
    again = next(k for k in _listed(client, tenant) if k["id"] == created["id"])
    assert datetime.fromisoformat(again["last_used_at"]) == stamped
    # A minute later the next use stamps it again.
    owner_conn.execute("UPDATE api_key SET last_used_at = now() - interval '2 minutes' "
                       "WHERE id = %s", (created["id"],))
    assert client.get("/v1/settings", headers=_bearer(created["key"])).status_code == 200
    later = next(k for k in _listed(client, tenant) if k["id"] == created["id"])
    assert datetime.fromisoformat(later["last_used_at"]) > stamped


def test_an_app_key_gets_403_everywhere(client: Any, tenant: dict[str, Any]) -> None:
    app_id = _key_id(client, tenant, "app")
    responses = [
        client.post("/v1/api-keys", json={"role": "compliance"}, headers=tenant["app"]),
        client.get("/v1/api-keys", headers=tenant["app"]),
        client.delete(f"/v1/api-keys/{app_id}", headers=tenant["app"]),
    ]
    assert [r.status_code for r in responses] == [403, 403, 403]
    assert len(_listed(client, tenant)) == 2


def test_another_tenants_key_is_404_and_keeps_working(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    theirs = _key_id(client, other_tenant, "app")
    deleted = client.delete(f"/v1/api-keys/{theirs}", headers=tenant["compliance"])
    assert deleted.status_code == 404
    assert deleted.json()["type"] == PROBLEMS + "api-key-not-found"
    assert client.get("/v1/settings", headers=other_tenant["app"]).status_code == 200
    assert theirs not in [k["id"] for k in _listed(client, tenant)]


@pytest.mark.parametrize("body", [{"role": "admin"}, {}, {"role": "app", "extra": 1}])
def test_invalid_bodies_are_422(client: Any, tenant: dict[str, Any], body: dict[str, Any]
                                ) -> None:
    assert client.post("/v1/api-keys", json=body, headers=tenant["compliance"]
                       ).status_code == 422


def test_every_change_is_audited_with_its_actor(client: Any, tenant: dict[str, Any]) -> None:
    actor = f"key:{_key_id(client, tenant, 'compliance')}"
    created = client.post("/v1/api-keys", json={"role": "app"},
                          headers=tenant["compliance"]).json()
    client.delete(f"/v1/api-keys/{created['id']}", headers=tenant["compliance"])
    events = client.get(f"/v1/audit?target_id={created['id']}",
                        headers=tenant["compliance"]).json()["data"]
    assert [(e["action"], e["actor"], e["target_kind"], e["details"]) for e in events] == [
        ("api_key.created", actor, "api_key", {"role": "app"}),
        ("api_key.revoked", actor, "api_key", {"role": "app"}),
    ]
