"""`/v1/staff`: console staff, their passwords hashed with Argon2, every change audited."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from argon2 import PasswordHasher

from app.core import uow
from app.staff import service as staff

PROBLEMS = "https://lethe.dev/problems/"


def _create(client: Any, headers: dict[str, str], **body: Any) -> Any:
    return client.post("/v1/staff", json={"role": "officer", **body}, headers=headers)


def _compliance_key_id(client: Any, tenant: dict[str, Any]) -> str:
    listed = client.get("/v1/api-keys", headers=tenant["compliance"]).json()["data"]
    return next(k["id"] for k in listed if k["role"] == "compliance")


def _database_text(owner_conn: Any) -> str:
    """Every row of every table, as text."""
    tables = [row[0] for row in owner_conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()]
    return "\n".join(
        str(row[0]) for table in tables
        for row in owner_conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()
    )


def test_a_generated_password_is_shown_once_and_stored_only_as_an_argon2_hash(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    headers = {**tenant["compliance"], "Idempotency-Key": "staff-ada"}
    created = _create(client, headers, email="ada@example.com")
    assert created.status_code == 201, created.text
    body = created.json()
    password = body["password"]
    assert isinstance(password, str) and len(password) >= 32
    assert body["email"] == "ada@example.com" and body["role"] == "officer"

    replay = _create(client, headers, email="ada@example.com")
    assert replay.status_code == 201
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == {**body, "password": None}

    (stored,) = owner_conn.execute(
        "SELECT password_hash FROM staff WHERE id = %s", (body["id"],)).fetchone()
    assert stored.startswith("$argon2id$")
    assert PasswordHasher().verify(stored, password)
    assert password not in _database_text(owner_conn)


def test_a_chosen_password_is_not_echoed_and_signs_in(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    chosen = "correct horse battery staple"
    created = _create(client, tenant["compliance"], email="Grace@Example.COM", role="viewer",
                      password=chosen)
    assert created.status_code == 201, created.text
    assert created.json()["password"] is None
    assert created.json()["email"] == "grace@example.com"
    assert chosen not in _database_text(owner_conn)
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        found = staff.verify_password(session, tenant_id=uuid.UUID(tenant["id"]),
                                      email="GRACE@example.com", password=chosen)
        assert found is not None and str(found.id) == created.json()["id"]


def test_an_email_is_unique_per_tenant_whatever_its_case(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    assert _create(client, tenant["compliance"], email="ada@example.com").status_code == 201
    again = _create(client, tenant["compliance"], email="ADA@Example.com")
    assert again.status_code == 409
    assert again.json()["type"] == PROBLEMS + "staff-email-taken"
    # Another tenant may have its own Ada.
    assert _create(client, other_tenant["compliance"], email="ada@example.com").status_code \
        == 201


@pytest.mark.parametrize("body", [
    {"email": "ada@example.com", "password": "short-pw"},
    {"email": "ada@example.com", "password": "x" * 11},
    {"email": "not-an-email"},
    {"email": "ada @example.com"},
    {"email": "ada@example.com", "role": "admin"},
    {"email": "ada@example.com", "extra": True},
])
def test_invalid_bodies_are_422(client: Any, tenant: dict[str, Any], body: dict[str, Any]
                                ) -> None:
    response = _create(client, tenant["compliance"], **body)
    assert response.status_code == 422, response.text


def test_staff_list_pages_and_removal_ends_sign_in(
    client: Any, tenant: dict[str, Any]
) -> None:
    ids = [_create(client, tenant["compliance"], email=f"s{i}@example.com",
                   password="a long enough password").json()["id"] for i in range(3)]
    first = client.get("/v1/staff?limit=2", headers=tenant["compliance"]).json()
    assert [m["id"] for m in first["data"]] == ids[:2]
    assert set(first["data"][0]) == {"id", "email", "role", "created_at"}
    second = client.get(f"/v1/staff?limit=2&cursor={first['next_cursor']}",
                        headers=tenant["compliance"]).json()
    assert [m["id"] for m in second["data"]] == ids[2:]
    assert second["next_cursor"] is None

    assert client.delete(f"/v1/staff/{ids[0]}", headers=tenant["compliance"]).status_code == 204
    assert client.delete(f"/v1/staff/{ids[0]}", headers=tenant["compliance"]).status_code == 204
    listed = client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]
    assert [m["id"] for m in listed] == ids[1:]
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        assert staff.verify_password(session, tenant_id=tenant_id, email="s0@example.com",
                                     password="a long enough password") is None
    # The removed member's email is free again.
    assert _create(client, tenant["compliance"], email="s0@example.com").status_code == 201


def test_an_app_key_gets_403_everywhere(client: Any, tenant: dict[str, Any]) -> None:
    member = _create(client, tenant["compliance"], email="ada@example.com").json()
    responses = [
        _create(client, tenant["app"], email="eve@example.com"),
        client.get("/v1/staff", headers=tenant["app"]),
        client.delete(f"/v1/staff/{member['id']}", headers=tenant["app"]),
    ]
    assert [r.status_code for r in responses] == [403, 403, 403]
    assert [m["id"] for m in client.get("/v1/staff", headers=tenant["compliance"]
                                        ).json()["data"]] == [member["id"]]


def test_another_tenants_member_is_404(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    member = _create(client, tenant["compliance"], email="ada@example.com").json()
    deleted = client.delete(f"/v1/staff/{member['id']}", headers=other_tenant["compliance"])
    assert deleted.status_code == 404
    assert deleted.json()["type"] == PROBLEMS + "staff-not-found"
    assert client.get("/v1/staff", headers=other_tenant["compliance"]).json()["data"] == []
    assert client.delete(f"/v1/staff/{uuid.uuid4()}",
                         headers=tenant["compliance"]).status_code == 404
    assert len(client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]) == 1


def test_every_change_is_audited_with_its_actor_and_without_credentials(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    member = _create(client, tenant["compliance"], email="ada@example.com").json()
    _create(client, tenant["compliance"], email="bob@example.com")  # so Ada is not the last
    assert client.delete(f"/v1/staff/{member['id']}",
                         headers=tenant["compliance"]).status_code == 204
    events = client.get(f"/v1/audit?target_id={member['id']}",
                        headers=tenant["compliance"]).json()["data"]
    actor = f"key:{_compliance_key_id(client, tenant)}"
    assert [(e["action"], e["actor"], e["target_kind"]) for e in events] == [
        ("staff.created", actor, "staff"), ("staff.removed", actor, "staff")]
    assert events[0]["details"] == {"role": "officer", "password_generated": True}
    audit_text = " ".join(str(row[0]) for row in owner_conn.execute(
        "SELECT t::text FROM audit_event t").fetchall())
    (password_hash,) = owner_conn.execute("SELECT password_hash FROM staff").fetchone()
    for secret in (member["password"], password_hash, "ada@example.com"):
        assert secret not in audit_text


def test_a_role_change_is_audited_and_the_same_role_changes_nothing(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = _create(client, tenant["compliance"], email="ada@example.com").json()
    member = _create(client, tenant["compliance"], email="bob@example.com", role="viewer").json()
    url = f"/v1/staff/{member['id']}"
    changed = client.patch(url, headers=tenant["compliance"], json={"role": "officer"})
    assert changed.status_code == 200, changed.text
    assert changed.json() == {**{k: member[k] for k in ("id", "email", "created_at")},
                              "role": "officer"}
    same = client.patch(url, headers=tenant["compliance"], json={"role": "officer"})
    assert same.status_code == 200 and same.json()["role"] == "officer"
    # With two officers, either may become a viewer.
    demoted = client.patch(f"/v1/staff/{first['id']}", headers=tenant["compliance"],
                           json={"role": "viewer"})
    assert demoted.status_code == 200
    events = client.get(f"/v1/audit?target_id={member['id']}&action=staff.role_changed",
                        headers=tenant["compliance"]).json()["data"]
    actor = f"key:{_compliance_key_id(client, tenant)}"
    assert [(e["actor"], e["details"]) for e in events] == [
        (actor, {"role": "officer", "previous_role": "viewer"})]


def test_the_last_officer_cannot_be_demoted(client: Any, tenant: dict[str, Any]) -> None:
    only = _create(client, tenant["compliance"], email="ada@example.com").json()
    _create(client, tenant["compliance"], email="bob@example.com", role="viewer")
    refused = client.patch(f"/v1/staff/{only['id']}", headers=tenant["compliance"],
                           json={"role": "viewer"})
    assert refused.status_code == 409
    assert refused.json()["type"] == PROBLEMS + "last-officer"
    roles = [m["role"] for m in client.get("/v1/staff", headers=tenant["compliance"]
                                           ).json()["data"]]
    assert roles == ["officer", "viewer"]


def test_the_last_officer_cannot_be_removed(client: Any, tenant: dict[str, Any]) -> None:
    ada = _create(client, tenant["compliance"], email="ada@example.com").json()
    bob = _create(client, tenant["compliance"], email="bob@example.com", role="viewer").json()
    refused = client.delete(f"/v1/staff/{ada['id']}", headers=tenant["compliance"])
    assert refused.status_code == 409
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["type"] == PROBLEMS + "last-officer"
    assert refused.json()["status"] == 409
    # A viewer may go; the officer stays listed, and nothing was audited as removed.
    assert client.delete(f"/v1/staff/{bob['id']}", headers=tenant["compliance"]).status_code \
        == 204
    listed = client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]
    assert [(m["id"], m["role"]) for m in listed] == [(ada["id"], "officer")]
    removals = client.get(f"/v1/audit?target_id={ada['id']}&action=staff.removed",
                          headers=tenant["compliance"]).json()["data"]
    assert removals == []
    # With a second officer the first may go, and then the second is the last.
    carol = _create(client, tenant["compliance"], email="carol@example.com").json()
    assert client.delete(f"/v1/staff/{ada['id']}", headers=tenant["compliance"]).status_code \
        == 204
    assert client.delete(f"/v1/staff/{ada['id']}", headers=tenant["compliance"]).status_code \
        == 204
    last = client.delete(f"/v1/staff/{carol['id']}", headers=tenant["compliance"])
    assert last.status_code == 409 and last.json()["type"] == PROBLEMS + "last-officer"


def test_a_role_change_names_an_active_member_of_this_tenant_and_a_role(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    member = _create(client, tenant["compliance"], email="ada@example.com", role="viewer").json()
    url = f"/v1/staff/{member['id']}"
    theirs = client.patch(url, headers=other_tenant["compliance"], json={"role": "officer"})
    assert theirs.status_code == 404
    assert theirs.json()["type"] == PROBLEMS + "staff-not-found"
    assert client.patch(url, headers=tenant["app"], json={"role": "officer"}).status_code == 403
    for body in ({"role": "admin"}, {}, {"role": "officer", "email": "x@example.com"}):
        assert client.patch(url, headers=tenant["compliance"], json=body).status_code == 422
    client.delete(url, headers=tenant["compliance"])
    removed = client.patch(url, headers=tenant["compliance"], json={"role": "officer"})
    assert removed.status_code == 404
