"""`verify_password`: the check the console signs staff in with."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
from argon2 import PasswordHasher

from app.core import uow
from app.staff import passwords
from app.staff import service as staff
from app.staff.errors import LastOfficer
from app.staff.models import StaffRole

PASSWORD = "a long enough password"


def _member(tenant_id: uuid.UUID, email: str = "ada@example.com") -> uuid.UUID:
    prepared = staff.prepare_password(PASSWORD)
    with uow.unit_of_work(tenant_id) as session:
        return staff.create(session, tenant_id=tenant_id, email=email, role=StaffRole.officer,
                            prepared=prepared, actor="admin").id


def _verify(tenant_id: uuid.UUID, email: str, password: str) -> uuid.UUID | None:
    with uow.unit_of_work(tenant_id) as session:
        found = staff.verify_password(session, tenant_id=tenant_id, email=email,
                                      password=password)
        return None if found is None else found.id


def test_the_right_password_finds_the_member_and_nothing_else_does(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    tenant_id, other_id = uuid.UUID(tenant["id"]), uuid.UUID(other_tenant["id"])
    member = _member(tenant_id)
    assert _verify(tenant_id, "ada@example.com", PASSWORD) == member
    assert _verify(tenant_id, "Ada@Example.com", PASSWORD) == member
    assert _verify(tenant_id, "ada@example.com", PASSWORD + "!") is None
    assert _verify(tenant_id, "bob@example.com", PASSWORD) is None
    assert _verify(other_id, "ada@example.com", PASSWORD) is None


def test_an_unknown_email_costs_a_hash_like_a_wrong_password(tenant: dict[str, Any]) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    _member(tenant_id)
    passwords.verify_nothing("warm the dummy hash")

    def cost(email: str) -> float:
        started = time.perf_counter()
        assert _verify(tenant_id, email, "wrong password here") is None
        return time.perf_counter() - started

    wrong, unknown = min(cost("ada@example.com") for _ in range(3)), min(
        cost("nobody@example.com") for _ in range(3))
    assert unknown > wrong / 3, (wrong, unknown)


def test_a_hash_with_old_parameters_is_replaced_at_sign_in(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    member = _member(tenant_id)
    weak = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(PASSWORD)
    owner_conn.execute("UPDATE staff SET password_hash = %s WHERE id = %s", (weak, member))
    assert _verify(tenant_id, "ada@example.com", PASSWORD) == member
    (rehashed,) = owner_conn.execute(
        "SELECT password_hash FROM staff WHERE id = %s", (member,)).fetchone()
    assert rehashed != weak and not passwords.needs_rehash(rehashed)
    assert passwords.verify(rehashed, PASSWORD)
    assert _verify(tenant_id, "ada@example.com", PASSWORD) == member


def _take_away(session: Any, tenant_id: uuid.UUID, staff_id: uuid.UUID, how: str) -> None:
    """Take an officer's role away, by demotion or by removal."""
    if how == "demote":
        staff.change_role(session, tenant_id=tenant_id, staff_id=staff_id,
                          role=StaffRole.viewer, actor="admin")
    else:
        staff.remove(session, tenant_id=tenant_id, staff_id=staff_id, actor="admin")


@pytest.mark.parametrize("first_how,second_how", [
    ("demote", "demote"), ("remove", "remove"), ("demote", "remove"), ("remove", "demote")])
def test_two_officers_demoting_or_removing_each_other_at_once_leave_one_officer(
    tenant: dict[str, Any], owner_conn: Any, first_how: str, second_how: str
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    first, second = _member(tenant_id, "ada@example.com"), _member(tenant_id, "bob@example.com")
    outcome: list[object] = []

    def take_second() -> None:
        try:
            with uow.unit_of_work(tenant_id) as session:
                _take_away(session, tenant_id, second, second_how)
            outcome.append("done")
        except LastOfficer as exc:
            outcome.append(exc)

    with uow.unit_of_work(tenant_id) as session:
        _take_away(session, tenant_id, first, first_how)
        # The second change starts while the first is uncommitted, and must wait for it.
        other = threading.Thread(target=take_second)
        other.start()
        for _ in range(500):
            waiting = owner_conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()").fetchone()[0]
            if waiting or not other.is_alive():
                break
            time.sleep(0.01)
    other.join(timeout=30)
    assert len(outcome) == 1 and isinstance(outcome[0], LastOfficer), outcome
    officers = owner_conn.execute(
        "SELECT id FROM staff WHERE tenant_id = %s AND role = 'officer' AND removed_at IS NULL",
        (tenant["id"],)).fetchall()
    assert [row[0] for row in officers] == [second]
    for how in ("demote", "remove"):
        with pytest.raises(LastOfficer), uow.unit_of_work(tenant_id) as session:
            _take_away(session, tenant_id, second, how)
