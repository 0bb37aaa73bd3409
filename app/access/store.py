"""The `access_export` table: the one module that reads and writes its rows."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import delete
from sqlmodel import Session, col, select

from app.access.models import AccessExport
from app.core.models import utcnow


def add(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, subject: str,
    body: dict[str, Any], expires_at: datetime,
) -> AccessExport:
    export = AccessExport(operation_id=operation_id, tenant_id=tenant_id, subject=subject,
                          body=body, created_at=utcnow(), expires_at=expires_at)
    session.add(export)
    session.flush()
    return export


def get(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, now: datetime
) -> AccessExport | None:
    """The export of ``operation_id`` unless it has expired."""
    return session.exec(
        select(AccessExport).where(AccessExport.tenant_id == tenant_id,
                                   AccessExport.operation_id == operation_id,
                                   col(AccessExport.expires_at) > now)
    ).first()


def purge_subject(session: Session, *, tenant_id: uuid.UUID, subject: str) -> int:
    """Delete every export of ``subject`` (an erasure must not leave one behind)."""
    result = session.execute(
        delete(AccessExport).where(col(AccessExport.tenant_id) == tenant_id,
                                   col(AccessExport.subject) == subject))
    return int(getattr(result, "rowcount", 0) or 0)

