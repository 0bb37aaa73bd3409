"""`lethe staff create`: the command line adds a staff member as the API does."""

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
