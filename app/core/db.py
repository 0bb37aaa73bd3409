"""Engines and the one way to open a unit of work.

The application connects as a role that row-level security applies to. Every transaction
names its tenant with ``set_config('lethe.tenant_id', …, true)`` — transaction-local, so a
pooled connection can never carry one tenant's context into another's request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from uuid import UUID

from sqlalchemy import Engine, create_engine, text
from sqlmodel import Session

from app.core.config import get_settings
from app.core.runtime import get_runtime

TENANT_GUC = "lethe.tenant_id"
AUTH_GUC = "lethe.auth_key_hash"
SCOPE_GUC = "lethe.scope"


def make_engine(url: str, *, pool_size: int = 5, **kwargs: Any) -> Engine:
    return create_engine(
        url,
        pool_size=pool_size,
        max_overflow=0,
        pool_pre_ping=True,
        pool_timeout=30,
        **kwargs,
    )


@lru_cache
def app_engine() -> Engine:
    return make_engine(get_runtime().app_url, pool_size=get_settings().db_pool_size)


@lru_cache
def owner_engine() -> Engine:
    return make_engine(get_runtime().owner_url, pool_size=2)


def set_tenant(session: Session, tenant_id: UUID) -> None:
    session.execute(
        text("SELECT set_config(:name, :value, true)"),
        {"name": TENANT_GUC, "value": str(tenant_id)},
    )


def set_local(session: Session, name: str, value: str) -> None:
    session.execute(text("SELECT set_config(:name, :value, true)"), {"name": name, "value": value})


@contextmanager
def session_scope(
    tenant_id: UUID | None = None, *, engine: Engine | None = None
) -> Iterator[Session]:
    """One transaction: commit on success, roll back on any error.

    Services only ``flush()``; this is the single place that commits, used by requests (via
    the unit of work) and by Celery tasks alike.
    """
    session = Session(engine or app_engine(), expire_on_commit=False)
    try:
        session.begin()
        if tenant_id is not None:
            set_tenant(session, tenant_id)
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def maintenance_scope() -> Iterator[Session]:
    """A transaction that may list tenants (and nothing else) across the installation.

    Beat jobs use it to find tenants, then do their work per tenant in `session_scope`, so
    tenant-owned rows stay behind row-level security even for maintenance.
    """
    with session_scope() as session:
        set_local(session, SCOPE_GUC, "maintenance")
        yield session


def dispose_engines() -> None:
    for factory in (app_engine, owner_engine):
        if factory.cache_info().currsize:
            factory().dispose()
        factory.cache_clear()
