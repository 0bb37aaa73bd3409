"""The database keeps audit_event append-only, whatever the application code does."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.core import uow
from tests.audit.helpers import append, verify


@pytest.mark.parametrize("statement", [
    "UPDATE audit_event SET reason = 'rewritten'",
    "UPDATE audit_event SET hash = repeat('0', 64) WHERE seq = 2",
    "DELETE FROM audit_event",
    "DELETE FROM audit_event WHERE seq = 2",
])
def test_application_role_cannot_change_or_remove_events(
    tenant: dict[str, Any], owner_conn: Any, statement: str
) -> None:
    written = append(tenant["id"], 3)
    with pytest.raises(DBAPIError, match=r"append-only|permission denied"), uow.unit_of_work(
        uuid.UUID(tenant["id"])
    ) as session:
        session.execute(text(statement))
    result = verify(tenant["id"])
    assert (result.ok, result.events, result.head) == (True, 3, written[-1]["hash"])


def test_application_role_cannot_truncate(tenant: dict[str, Any]) -> None:
    append(tenant["id"], 2)
    with pytest.raises(DBAPIError, match="permission denied"), uow.unit_of_work(
        uuid.UUID(tenant["id"])
    ) as session:
        session.execute(text("TRUNCATE audit_event"))
    assert verify(tenant["id"]).events == 2


def test_owner_is_refused_too_unless_maintenance_is_on(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    append(tenant["id"], 2)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
        owner_conn.execute("DELETE FROM audit_event")
    assert owner_conn.execute("SELECT count(*) FROM audit_event").fetchone()[0] == 2


def test_deleting_a_tenant_with_an_audit_trail_is_refused(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    """The cascade from tenant deletes rows one by one, so the trigger guards it as well."""
    append(tenant["id"], 1)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        owner_conn.execute("DELETE FROM tenant WHERE id = %s", (tenant["id"],))
