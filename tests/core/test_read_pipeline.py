"""The pipelined read transaction recall uses: tenant-scoped, read-only, and leaves nothing."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest
from sqlalchemy import text

from app.core import db, uow


def test_a_pipelined_read_sees_its_tenant_only_and_cannot_write(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    with db.read_pipeline(tenant_id, settings={"hnsw.ef_search": "123"}) as conn:
        keys = conn.execute("SELECT DISTINCT tenant_id FROM api_key")
        ef = conn.execute("SELECT current_setting('hnsw.ef_search')")
        assert [row[0] for row in keys.fetchall()] == [tenant_id]
        assert ef.fetchone() == ("123",)
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), \
            db.read_pipeline(tenant_id) as conn:
        conn.execute("UPDATE tenant SET name = 'changed'").fetchall()
    with uow.unit_of_work(tenant_id) as session:
        assert session.execute(text("SELECT name FROM tenant")).scalar() != "changed"


def test_a_pipelined_read_leaves_no_setting_on_its_pooled_connection(
    tenant: dict[str, Any]
) -> None:
    with db.read_pipeline(uuid.UUID(tenant["id"])) as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()
    # The pool hands out the connection returned last (LIFO): the same one, now bare.
    with db.app_engine().connect() as conn:
        assert (conn.execute(text("SELECT pg_backend_pid()")).scalar(),) == pid
        assert conn.execute(text("SELECT count(*) FROM api_key")).scalar() == 0
        assert conn.execute(text("SHOW transaction_read_only")).scalar() == "off"


@pytest.mark.parametrize("failure", ["python", "sql"])
def test_a_failed_pipelined_read_rolls_back_and_returns_a_clean_connection(
    tenant: dict[str, Any], failure: str
) -> None:
    """An error inside the block, raised by the caller or by a statement, ends the transaction
    before the connection goes back to the pool, tenant setting and all."""
    with pytest.raises((RuntimeError, psycopg.errors.DivisionByZero)), \
            db.read_pipeline(uuid.UUID(tenant["id"])) as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()
        if failure == "python":
            raise RuntimeError("the caller failed")
        conn.execute("SELECT 1 / 0").fetchall()
    with db.app_engine().connect() as conn:
        assert (conn.execute(text("SELECT pg_backend_pid()")).scalar(),) == pid
        assert conn.execute(text("SELECT count(*) FROM api_key")).scalar() == 0
        assert conn.execute(text("SHOW transaction_read_only")).scalar() == "off"
