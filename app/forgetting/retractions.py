"""Retraction records: what stays visible of a forget (never the forgotten text).

Recall reads them with its own read-only SQL (`app/recall/retractions.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlmodel import Session, col, select

from app.forgetting.models import Retraction


def record(
    session: Session, *, tenant_id: uuid.UUID, subject: str, about: str | None,
    memory_ids: Sequence[uuid.UUID],
) -> Retraction:
    retraction = Retraction(
        tenant_id=tenant_id, subject=subject, about=about,
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
