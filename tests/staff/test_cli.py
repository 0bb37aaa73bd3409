"""`lethe staff create|role`: the command line adds staff and changes roles as the API does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from typing import Any

from app.core import uow
from app.staff import service as staff


def _lethe(*args: str) -> subprocess.CompletedProcess[str]:
    # The test run's environment names its database and secrets.
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)


def test_staff_create_prints_a_generated_password_once(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    done = _lethe("staff", "create", "--tenant", tenant["id"], "--email", "Ada@Example.com",
                  "--role", "officer")
    assert done.returncode == 0, done.stderr
    match = re.search(r"password \(shown once\): (\S+)", done.stdout)
    assert match is not None, done.stdout
    password = match.group(1)
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        member = staff.verify_password(session, tenant_id=tenant_id, email="ada@example.com",
                                       password=password)
        assert member is not None and member.role.value == "officer"
    listed = client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]
    assert [(m["id"], m["email"]) for m in listed] == [(str(member.id), "ada@example.com")]
    events = client.get(f"/v1/audit?target_id={member.id}",
                        headers=tenant["compliance"]).json()["data"]
    assert [(e["action"], e["actor"]) for e in events] == [("staff.created", "admin")]
    stored = " ".join(str(row[0]) for row in owner_conn.execute(
        "SELECT t::text FROM staff t").fetchall())
    assert password not in stored


def test_staff_create_with_a_chosen_password_prints_none(tenant: dict[str, Any]) -> None:
    done = _lethe("staff", "create", "--tenant", tenant["id"], "--email", "bob@example.com",
                  "--role", "viewer", "--password", "a long enough password")
    assert done.returncode == 0, done.stderr
    assert "password" not in done.stdout


def test_staff_create_refuses_what_the_api_refuses(tenant: dict[str, Any]) -> None:
    short = _lethe("staff", "create", "--tenant", tenant["id"], "--email", "ada@example.com",
                   "--role", "officer", "--password", "short")
    assert short.returncode == 2 and "password" in short.stderr
    unknown = _lethe("staff", "create", "--tenant", str(uuid.uuid4()), "--email",
                     "ada@example.com", "--role", "officer")
    assert unknown.returncode == 1 and "no tenant" in unknown.stderr
    assert _lethe("staff", "create", "--tenant", tenant["id"], "--email", "ada@example.com",
                  "--role", "officer").returncode == 0
    taken = _lethe("staff", "create", "--tenant", tenant["id"], "--email", "ADA@example.com",
                   "--role", "viewer")
    assert taken.returncode == 1 and "email" in taken.stderr


def test_staff_role_changes_a_member_named_by_email_or_id_as_the_api_does(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    def add(email: str, role: str) -> dict[str, Any]:
        made = client.post("/v1/staff", headers=tenant["compliance"],
                           json={"email": email, "role": role})
        assert made.status_code == 201, made.text
        return dict(made.json())

    ada, bob = add("ada@example.com", "officer"), add("bob@example.com", "viewer")
    (generation,) = owner_conn.execute(
        "SELECT session_generation FROM staff WHERE id = %s", (bob["id"],)).fetchone()
    promoted = _lethe("staff", "role", "--tenant", tenant["id"], "--member", "BOB@example.com",
                      "--role", "officer")
    assert promoted.returncode == 0, promoted.stderr
    assert bob["id"] in promoted.stdout and "officer" in promoted.stdout
    demoted = _lethe("staff", "role", "--tenant", tenant["id"], "--member", ada["id"],
                     "--role", "viewer")
    assert demoted.returncode == 0, demoted.stderr
    listed = client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]
    assert [(m["id"], m["role"]) for m in listed] == [(ada["id"], "viewer"),
                                                       (bob["id"], "officer")]
    # The member's console sessions ended with the change.
    (after,) = owner_conn.execute(
        "SELECT session_generation FROM staff WHERE id = %s", (bob["id"],)).fetchone()
    assert after == generation + 1
    events = client.get(f"/v1/audit?target_id={bob['id']}&action=staff.role_changed",
                        headers=tenant["compliance"]).json()["data"]
    assert [(e["actor"], e["details"]) for e in events] == [
        ("admin", {"role": "officer", "previous_role": "viewer"})]

    last = _lethe("staff", "role", "--tenant", tenant["id"], "--member", bob["id"],
                  "--role", "viewer")
    assert last.returncode == 1 and "only officer" in last.stderr
    unknown = _lethe("staff", "role", "--tenant", tenant["id"], "--member",
                     "nobody@example.com", "--role", "officer")
    assert unknown.returncode == 1 and "No such staff member" in unknown.stderr
    bad_role = _lethe("staff", "role", "--tenant", tenant["id"], "--member", bob["id"],
                      "--role", "admin")
    assert bad_role.returncode == 2 and "role" in bad_role.stderr
    bad_tenant = _lethe("staff", "role", "--tenant", "acme", "--member", bob["id"],
                        "--role", "viewer")
    assert bad_tenant.returncode == 2
    listed = client.get("/v1/staff", headers=tenant["compliance"]).json()["data"]
    assert [m["role"] for m in listed] == ["viewer", "officer"]
