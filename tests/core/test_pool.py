"""Pooled connections: a connection the server dropped is replaced before anyone uses it."""

from __future__ import annotations

import time
import uuid
from typing import Any

from sqlalchemy import text

from app.core import db, uow
from app.core.runtime import get_runtime


def _backend_pid(engine: Any) -> int:
    with uow.unit_of_work(engine=engine) as session:
        return int(session.execute(text("SELECT pg_backend_pid()")).scalar_one())


def test_a_connection_the_server_closed_is_replaced_at_checkout(owner_conn: Any) -> None:
    engine = db.make_engine(get_runtime().app_url, pool_size=1)
    try:
        first = _backend_pid(engine)
        assert _backend_pid(engine) == first  # one pooled connection, reused
        # A restart or an administrator ends the server process behind the idle connection.
        owner_conn.execute("SELECT pg_terminate_backend(%s)", (first,))
        deadline = time.monotonic() + 5
        while owner_conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (first,)
        ).fetchone()[0] and time.monotonic() < deadline:
            time.sleep(0.01)
        # The next unit of work gets a fresh connection instead of an error.
        second = _backend_pid(engine)
        assert second != first
        # So does a pipelined read on the application's pool, all of whose connections end.
        with db.read_pipeline(uuid.uuid4()) as conn:
            conn.execute("SELECT 1").fetchone()
        ended = owner_conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE usename = %s AND datname = current_database()", (get_runtime().app_role,)
        ).fetchone()[0]
        assert ended >= 1
        time.sleep(0.2)
        with db.read_pipeline(uuid.uuid4()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        engine.dispose()


def test_a_live_idle_connection_is_kept(owner_conn: Any) -> None:
    engine = db.make_engine(get_runtime().app_url, pool_size=1)
    try:
        pids = {_backend_pid(engine) for _ in range(20)}
        assert len(pids) == 1
    finally:
        engine.dispose()
