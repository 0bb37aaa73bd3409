"""Retraction records: what stays visible of a forget (never the forgotten text).

Recall reads them with its own read-only SQL (`app/recall/retractions.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import text
from sqlmodel import Session, col, select

from app.forgetting.models import Retraction
from app.memories import sealing
from app.tenant_settings import service as tenant_settings


def record(
    session: Session, *, tenant_id: uuid.UUID, subject: str, about: str | None,
    memory_ids: Sequence[uuid.UUID],
) -> Retraction:
    """A retraction of ``memory_ids``; ``about`` is kept only while the tenant setting
    `retractions.keep_about` is on (off: the record says only when, and how many)."""
    if about is not None and not tenant_settings.get(
            session, tenant_id=tenant_id).retractions.keep_about:
        about = None
    retraction_id = uuid.uuid4()
    retraction = Retraction(
        id=retraction_id, tenant_id=tenant_id, subject=subject,
        sealed_about=sealing.seal_about(tenant_id, subject, retraction_id, about),
        memory_ids=[str(memory_id) for memory_id in memory_ids], memory_count=len(memory_ids),
    )
    session.add(retraction)
    session.flush()
    return retraction


def of_subject(session: Session, *, tenant_id: uuid.UUID, subject: str) -> list[Retraction]:
    """The subject's retraction records, oldest first (an access export lists them)."""
    return list(session.exec(
        select(Retraction).where(Retraction.tenant_id == tenant_id,
                                 Retraction.subject == subject)
        .order_by(col(Retraction.created_at), col(Retraction.id))
    ))


def erase_subject(session: Session, *, tenant_id: uuid.UUID, subject: str, marker: str) -> int:
    """An erasure's part: the subject's records lose their `about` phrase and name the
    subject by ``marker``; their dates, counts and memory IDs stay. Returns how many."""
    rows = of_subject(session, tenant_id=tenant_id, subject=subject)
    for retraction in rows:
        retraction.sealed_about = None
        retraction.subject = marker
        session.add(retraction)
    session.flush()
    return len(rows)


def about_of(retraction: Retraction) -> str | None:
    """A record's `about` phrase, opened."""
    return sealing.open_about(retraction.tenant_id, retraction.subject, retraction.id,
                              retraction.sealed_about)


_ERASE_ABOUT_OF = text("""
    UPDATE retraction SET sealed_about = NULL
    WHERE tenant_id = :tenant_id AND sealed_about IS NOT NULL AND memory_ids ?| :memory_ids
""")


def erase_about_of(session: Session, *, tenant_id: uuid.UUID,
                   memory_ids: Sequence[uuid.UUID]) -> int:
    """An erasure's part for what was derived from the subject's memories: a retraction of
    any of ``memory_ids``, whoever's it is, loses its `about` phrase (the caller wrote it of
    an erased memory, so it may repeat the erased text). Returns how many."""
    if not memory_ids:
        return 0
    result = session.execute(_ERASE_ABOUT_OF, {
        "tenant_id": tenant_id, "memory_ids": [str(memory_id) for memory_id in memory_ids]})
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
