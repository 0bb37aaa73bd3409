"""The `access_export` table: the one module that reads and writes its rows.

An export's document is sealed under its subject's data key (`app/keys/sealed_json.py`), bound
to its row: the database holds no readable copy, and an erasure's key destruction reaches any
copy an older backup kept."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import delete
from sqlmodel import Session, col, select

from app.access.models import AccessExport
from app.core.models import utcnow
from app.keys import sealed_json
from app.keys.errors import KeyDestroyed
from app.keys.subjects import row_aad


def add(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, subject: str,
    body: dict[str, Any], expires_at: datetime,
) -> AccessExport:
    """Keep an export (``subject``: the subject's digest, as stored)."""
    export = AccessExport(operation_id=operation_id, tenant_id=tenant_id, subject=subject,
                          body=sealed_json.seal(tenant_id, None, body, digest=subject,
                                                aad=_aad(operation_id)),
                          created_at=utcnow(), expires_at=expires_at)
    session.add(export)
    session.flush()
    return export


def get(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, now: datetime
) -> dict[str, Any] | None:
    """The export document of ``operation_id``; None when it has expired, or its subject's
    key is gone (a copy restored from before an erasure)."""
    found = session.exec(
        select(AccessExport).where(AccessExport.tenant_id == tenant_id,
                                   AccessExport.operation_id == operation_id,
                                   col(AccessExport.expires_at) > now)
    ).first()
    if found is None:
        return None
    if not sealed_json.is_sealed(found.body):
        return found.body  # stored before sealing
    try:
        return dict(sealed_json.open_value(tenant_id, found.body, aad=_aad(operation_id)))
    except KeyDestroyed:
        return None


def _aad(operation_id: uuid.UUID) -> bytes:
    return row_aad("access_export", operation_id, "body")


def purge_subject(session: Session, *, tenant_id: uuid.UUID, subject: str) -> int:
    """Delete every export of ``subject`` (an erasure must not leave one behind)."""
    result = session.execute(
        delete(AccessExport).where(col(AccessExport.tenant_id) == tenant_id,
                                   col(AccessExport.subject) == subject))
    return int(getattr(result, "rowcount", 0) or 0)

