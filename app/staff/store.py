"""Every statement on `staff`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, select

from app.core import paging
from app.core.models import utcnow
from app.staff.models import Staff, StaffRole

_ACTIVE = text("removed_at IS NULL")


def insert_unless_taken(
    session: Session, *, tenant_id: uuid.UUID, email: str, role: StaffRole,
    password_hash: str,
) -> Staff | None:
    """Add a member; None when an active member of the tenant has this email. One statement,
    so two concurrent creates of one email cannot both succeed (the unique index decides)."""
    statement = (
        insert(Staff)
        .values(id=uuid.uuid4(), tenant_id=tenant_id, email=email, role=role,
                password_hash=password_hash, created_at=utcnow())
        .on_conflict_do_nothing(index_elements=["tenant_id", "email"], index_where=_ACTIVE)
        .returning(Staff)
    )
    return session.scalars(statement).first()


def get(session: Session, *, tenant_id: uuid.UUID, staff_id: uuid.UUID,
        lock: bool = False) -> Staff | None:
    statement = select(Staff).where(Staff.tenant_id == tenant_id, Staff.id == staff_id)
    return session.exec(statement.with_for_update() if lock else statement).first()


def find_active(session: Session, *, tenant_id: uuid.UUID, email: str) -> Staff | None:
    return session.exec(
        select(Staff).where(Staff.tenant_id == tenant_id, Staff.email == email, _ACTIVE)
    ).first()


def page(
    session: Session, *, tenant_id: uuid.UUID, limit: int, cursor: str | None
) -> tuple[Sequence[Staff], str | None]:
    """Active members, oldest first by (created_at, id); the cursor is the last ID of the
    previous page, and one naming no member of this tenant ends the listing."""
    statement = select(Staff).where(Staff.tenant_id == tenant_id, _ACTIVE)
    return paging.page(session, statement, Staff, tenant_id=tenant_id, limit=limit,
                       cursor=cursor)


def mark_removed(session: Session, staff: Staff) -> None:
    staff.removed_at = utcnow()
    session.add(staff)
    session.flush()


def set_password_hash(session: Session, staff: Staff, password_hash: str) -> None:
    staff.password_hash = password_hash
    session.add(staff)
    session.flush()
