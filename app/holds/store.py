"""Statements on `legal_hold` and `legal_hold_memory`.

Which memories a hold covers is a statement over the memory tables as well, so it lives in
the memory store (`app/memories/store.py`, `COVERS`, `held_by`), which reads these tables by
name; this module writes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import func
from sqlmodel import Session, col, select

from app.core import paging
from app.holds.models import LegalHold, LegalHoldMemory


def insert(session: Session, hold: LegalHold, *, memory_ids: Sequence[uuid.UUID] = ()) -> None:
    session.add(hold)
    session.flush()
    session.add_all([LegalHoldMemory(hold_id=hold.id, memory_id=memory_id,
                                     tenant_id=hold.tenant_id)
                     for memory_id in sorted(set(memory_ids))])
    session.flush()


def find(
    session: Session, *, tenant_id: uuid.UUID, hold_id: uuid.UUID, for_update: bool = False
) -> LegalHold | None:
    statement = select(LegalHold).where(LegalHold.tenant_id == tenant_id,
                                        LegalHold.id == hold_id)
    if for_update:
        statement = statement.with_for_update().execution_options(populate_existing=True)
    return session.exec(statement).first()


def memory_ids_of(
    session: Session, hold_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[uuid.UUID]]:
    """The memories each of these (memory_ids) holds names, in ID order."""
    found: dict[uuid.UUID, list[uuid.UUID]] = {hold_id: [] for hold_id in hold_ids}
    if not hold_ids:
        return found
    rows = session.exec(
        select(LegalHoldMemory.hold_id, LegalHoldMemory.memory_id)
        .where(col(LegalHoldMemory.hold_id).in_(list(hold_ids)))
        .order_by(col(LegalHoldMemory.hold_id), col(LegalHoldMemory.memory_id))
    ).all()
    for hold_id, memory_id in rows:
        found[hold_id].append(memory_id)
    return found


def page(
    session: Session, *, tenant_id: uuid.UUID, active: bool | None, limit: int,
    cursor: str | None,
) -> tuple[Sequence[LegalHold], str | None]:
    """One page of holds oldest first by (created_at, id), and the next page's cursor."""
    statement = select(LegalHold).where(LegalHold.tenant_id == tenant_id)
    if active is not None:
        statement = statement.where(col(LegalHold.released_at).is_(None) if active
                                    else col(LegalHold.released_at).is_not(None))
    return paging.page(session, statement, LegalHold, tenant_id=tenant_id, limit=limit,
                       cursor=cursor)


def count_active(session: Session, *, tenant_id: uuid.UUID) -> int:
    return session.exec(
        select(func.count()).select_from(LegalHold)
        .where(LegalHold.tenant_id == tenant_id, col(LegalHold.released_at).is_(None))
    ).one()


def anonymize_released(
    session: Session, *, tenant_id: uuid.UUID, subject: str, subject_marker: str,
    source_markers: dict[str, str],
) -> None:
    """After an erasure completed: released holds that named the subject or one of its
    sources (``subject`` and the keys of ``source_markers``: digests, as stored) name their
    markers instead, their sealed copies emptied (active holds kept the erasure `on_hold`, so there
    are none of those)."""
    rows = session.exec(
        select(LegalHold).where(LegalHold.tenant_id == tenant_id,
                                col(LegalHold.released_at).is_not(None),
                                (col(LegalHold.subject) == subject)
                                | col(LegalHold.source).in_(sorted(source_markers)))
    ).all()
    for hold in rows:
        if hold.subject == subject:
            hold.subject, hold.sealed_subject = subject_marker, None
        if hold.source in source_markers:
            hold.source, hold.sealed_source = source_markers[hold.source], None
        session.add(hold)
    session.flush()
