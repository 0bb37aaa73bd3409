"""The unit of work: one transaction that commits once, then sends the jobs it enqueued.

Every request and every Celery task runs in one. Services only ``flush()``, and ask for
background work with `enqueue_job` (app/core/jobs.py); the unit sends it after its commit,
and nothing after a rollback. Two ways in:

- `unit_of_work()`: a Celery task's transaction, and the short reads a *prepare* step makes
  before a write's own unit opens. ``maintenance=True`` is the variant that may list tenants
  across the installation.
- `app/api/route.py`: every API route's `RequestWork`, the same transaction opened lazily,
  after authentication and the route's *prepare* step, with the Idempotency-Key claimed.

The only other ways to the database are `db.read_pipeline` (recall's read-only hot path) and
`db.autocommit` (one-statement key lookups, DDL).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlmodel import Session

from app.core import db, jobs

log = logging.getLogger(__name__)


@contextmanager
def unit_of_work(
    tenant_id: uuid.UUID | None = None, *, maintenance: bool = False,
    settings: Mapping[str, str] | None = None, engine: Engine | None = None,
) -> Iterator[Session]:
    """One transaction for ``tenant_id``: commit on success, roll back on any error; the jobs
    enqueued inside are sent after the commit.

    ``maintenance`` lets it list tenants (and nothing else) across the installation: beat
    jobs find tenants so, then work per tenant in units of their own, so tenant-owned rows
    stay behind row-level security even for maintenance. ``settings`` are further
    transaction-local settings, named in the same statement as the tenant.
    """
    values = {**({db.TENANT_GUC: str(tenant_id)} if tenant_id is not None else {}),
              **({db.SCOPE_GUC: "maintenance"} if maintenance else {}), **(settings or {})}
    with jobs.collecting() as queue:
        session = begin(engine or db.app_engine(), values)
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()
    queue.send()


def begin(engine: Engine, values: Mapping[str, str]) -> Session:
    session = Session(engine, expire_on_commit=False)
    try:
        session.begin()
        if values:
            db.set_locals(session, values)  # the tenant and every setting in one statement
    except BaseException:
        session.close()
        raise
    return session
