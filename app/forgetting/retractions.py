"""Retraction records: what stays visible of a forget (never the forgotten text)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlmodel import Session, col, select

from app.forgetting.models import Retraction

RECALLED_RETRACTIONS = 20


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


def for_subject(
    session: Session, *, tenant_id: uuid.UUID, subject: str, limit: int = RECALLED_RETRACTIONS
) -> Sequence[Retraction]:
    return session.exec(
        select(Retraction)
        .where(Retraction.tenant_id == tenant_id, Retraction.subject == subject)
        .order_by(col(Retraction.created_at).desc(), col(Retraction.id))
        .limit(limit)
    ).all()
