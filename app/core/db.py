"""Engines, transaction-local settings, and the two connections that are not a unit of work.

Every change, and every read outside recall, runs in a unit of work (`app.core.uow`). The two
exceptions live here: `read_pipeline`, recall's read-only hot path, and `autocommit`, for one
statement that needs no transaction (the API key lookup, health probes) or may not run in one
(DDL).

The application connects as a role that row-level security applies to. Every transaction
names its tenant with ``set_config('lethe.tenant_id', …, true)`` — transaction-local, so a
pooled connection can never carry one tenant's context into another's request.
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any
from uuid import UUID

import psycopg
from psycopg.pq import TransactionStatus
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry, QueuePool
from sqlmodel import Session

from app.core import metrics
from app.core.config import get_settings
from app.core.runtime import get_runtime, with_driver

TENANT_GUC = "lethe.tenant_id"
AUTH_GUC = "lethe.auth_key_hash"
SCOPE_GUC = "lethe.scope"


class TimedQueuePool(QueuePool):
    """A queue pool that reports how long each checkout waited (`lethe_db_pool_wait_seconds`
    on `/metrics`): the first sign of a pool too small for its process's concurrency, or of
    connections held across slow work, long before requests time out with a 503."""

    def _do_get(self) -> ConnectionPoolEntry:
        started = time.monotonic()
        try:
            return super()._do_get()
        finally:
            metrics.observe_pool_wait(time.monotonic() - started)


def make_engine(url: str, *, pool_size: int = 5, **kwargs: Any) -> Engine:
    engine = create_engine(
        url,
        poolclass=TimedQueuePool,
        pool_size=pool_size,
        max_overflow=0,
        pool_timeout=30,
        # Last in, first out: under light load requests keep reusing the same few connections
        # (their prepared statements stay useful) and the rest stay idle, where a server-side
        # idle timeout may close them; the checkout check below notices that.
        pool_use_lifo=True,
        # A statement error's text would otherwise quote its parameters: memory text, subjects.
        hide_parameters=True,
        **kwargs,
    )
    event.listen(engine, "checkout", _check_alive)
    return engine


def _check_alive(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Check a pooled connection on checkout, without a round trip (SQLAlchemy's pre-ping
    sends a query, which costs every request a round trip per connection it takes).

    An idle connection the server has closed (a restart, an administrator, an idle timeout)
    has something to read: the server's goodbye or end-of-file. A live idle one has nothing,
    since the server never writes unasked. `DisconnectionError` makes the pool replace it.
    """
    if dbapi_connection.closed or getattr(dbapi_connection, "broken", False):
        raise DisconnectionError("the connection is closed")
    readable, _, _ = select.select([dbapi_connection.fileno()], [], [], 0)
    if readable:
        raise DisconnectionError("the server wrote to, or closed, an idle connection")


@lru_cache
def app_engine() -> Engine:
    return make_engine(get_runtime().app_url, pool_size=get_settings().db_pool_size)


@lru_cache
def owner_engine() -> Engine:
    return make_engine(get_runtime().owner_url, pool_size=2)


@lru_cache
def replica_engines() -> tuple[Engine, ...]:
    """One engine per streaming replica of `read_database_urls` (the application role on
    each), in order; none without. `app.core.replicas` decides which serves a read."""
    urls = [url.strip() for url in (get_settings().read_database_urls or "").split(",")]
    return tuple(make_engine(with_driver(url), pool_size=get_settings().db_pool_size,
                             connect_args={"connect_timeout": 2})
                 for url in urls if url)


# The engine `read_pipeline` reads from: a replica that `app.core.replicas.reading` chose for
# this recall, or (unset) the primary.
READ_ENGINE: ContextVar[Engine | None] = ContextVar("lethe_read_engine", default=None)


def set_tenant(session: Session, tenant_id: UUID) -> None:
    set_locals(session, {TENANT_GUC: str(tenant_id)})


def set_locals(session: Session, values: Mapping[str, str]) -> None:
    """Transaction-local settings, all in one statement (one round trip)."""
    _send_set_locals(driver_connection(session), values)


def _send_set_locals(conn: psycopg.Connection[Any], values: Mapping[str, str]) -> None:
    params: dict[str, str] = {}
    for index, (name, value) in enumerate(values.items()):
        params[f"n{index}"], params[f"v{index}"] = name, value
    conn.execute(_set_config_sql(len(values)), params)


@lru_cache
def _set_config_sql(count: int) -> str:
    return "SELECT " + ", ".join(f"set_config(%(n{i})s, %(v{i})s, true)" for i in range(count))


@contextmanager
def autocommit(*, owner: bool = False) -> Iterator[Connection]:
    """A pooled connection on which every statement is its own transaction (the owner's with
    ``owner``, for statements that may not run in one, such as CREATE INDEX CONCURRENTLY).

    Only for those, and for single statements that must not pay for BEGIN and COMMIT (the API
    key lookup, health probes); settings made with ``set_config(…, true)`` inside such a
    statement end with it. Anything that writes, or reads more than once, runs in a unit of
    work.
    """
    engine = owner_engine() if owner else app_engine()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        yield conn


@contextmanager
def read_pipeline(
    tenant_id: UUID, *, settings: Mapping[str, str] | None = None, engine: Engine | None = None,
) -> Iterator[psycopg.Connection[Any]]:
    """A read-only transaction on the driver connection, in pipeline mode.

    Statements go out without waiting for each other's answers, and the server runs each as
    it arrives; a cursor's answer is awaited when it is fetched. So BEGIN, the tenant and
    ``settings`` and every read sent before the first fetch cost one round trip together, and
    a caller may send reads, then do other work (embed a query) while the server runs them.
    COMMIT goes out with the pipeline's closing sync. Recall's read-only hot path, the one
    reader that does not run in a unit of work: it changes nothing and enqueues nothing.

    BEGIN and COMMIT are sent as statements on a connection in autocommit mode: psycopg's own
    BEGIN in pipeline mode waits for its answer, and its commit is another round trip, which
    made five round trips of what are now two plus the caller's fetches.

    On ``engine``, else the one `READ_ENGINE` names (a replica chosen for this recall), else
    the primary.
    """
    values = {TENANT_GUC: str(tenant_id), **(settings or {})}
    chosen = engine or READ_ENGINE.get() or app_engine()
    with chosen.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        driver = driver_connection(conn)
        try:
            with driver.pipeline():
                driver.execute("BEGIN READ ONLY")
                _send_set_locals(driver, values)
                yield driver
                driver.execute("COMMIT")
        finally:
            # After an error, or a caller that left early: end the transaction before the
            # connection goes back to the pool (which expects no transaction in autocommit).
            if not driver.broken and driver.info.transaction_status in (
                    TransactionStatus.INTRANS, TransactionStatus.INERROR):
                driver.execute("ROLLBACK")


def driver_connection(conn: Connection | Session) -> psycopg.Connection[Any]:
    """The psycopg connection under ``conn`` (in its transaction), for statements sent raw."""
    connection = conn.connection() if isinstance(conn, Session) else conn
    driver = connection.connection.driver_connection
    assert isinstance(driver, psycopg.Connection)
    return driver


def dispose_engines() -> None:
    for factory in (app_engine, owner_engine):
        if factory.cache_info().currsize:
            factory().dispose()
        factory.cache_clear()
    if replica_engines.cache_info().currsize:
        for engine in replica_engines():
            engine.dispose()
    replica_engines.cache_clear()


def is_transient(exc: BaseException) -> bool:
    """A database error that a later attempt may not meet (connection lost, server restarting,
    pool exhausted, deadlock…): a task retries it, and a request answers it with 503.

    Raw psycopg errors count too: recall's `read_pipeline` talks to the driver directly, so
    its lost connections are not wrapped by SQLAlchemy.
    """
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError | sa_exc.TimeoutError
                      | psycopg.OperationalError | psycopg.InterfaceError)
