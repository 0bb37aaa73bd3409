"""Every statement on `staff`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import case, delete, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from app.core import db, paging
from app.core.models import utcnow
from app.staff.models import SignInThrottle, Staff, StaffRole

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


def emails(session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID]
           ) -> dict[uuid.UUID, str]:
    """Each member's email, removed members included (audit events outlive them)."""
    if not ids:
        return {}
    rows = session.exec(select(Staff.id, Staff.email).where(
        Staff.tenant_id == tenant_id, col(Staff.id).in_(sorted(set(ids))))).all()
    return dict(rows)


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


def lock_officers(session: Session, *, tenant_id: uuid.UUID) -> Sequence[Staff]:
    """The tenant's active officers, locked in ID order (so two demotions serialize)."""
    return session.exec(
        select(Staff).where(Staff.tenant_id == tenant_id, Staff.role == StaffRole.officer,
                            _ACTIVE)
        .order_by(col(Staff.id)).with_for_update()
    ).all()


def mark_removed(session: Session, staff: Staff) -> None:
    staff.removed_at = utcnow()
    staff.session_generation += 1
    session.add(staff)
    session.flush()


def set_role(session: Session, staff: Staff, role: StaffRole) -> None:
    """Change a (locked) member's role; their console sessions end with it."""
    staff.role = role
    staff.session_generation += 1
    session.add(staff)
    session.flush()


def end_session(session: Session, *, tenant_id: uuid.UUID, staff_id: uuid.UUID,
                generation: int) -> bool:
    """End the member's sessions of ``generation``; False when they had already ended. One
    statement, so a sign-out racing a role change cannot undo it."""
    table = Staff.__table__  # type: ignore[attr-defined]
    statement = (
        update(table)
        .where(table.c.tenant_id == tenant_id, table.c.id == staff_id,
               table.c.session_generation == generation)
        .values(session_generation=table.c.session_generation + 1)
        .returning(table.c.id)
    )
    return session.execute(statement).first() is not None


def set_password_hash(session: Session, staff: Staff, password_hash: str) -> None:
    staff.password_hash = password_hash
    session.add(staff)
    session.flush()


def tenants_with_email_in(session: Session, *, email: str, guc: str) -> list[uuid.UUID]:
    """`tenants_with_email` from inside another transaction: the email is named in ``guc``
    for this one read only, then cleared, so the rest of the transaction sees its tenant
    alone again."""
    db.set_locals(session, {guc: email})
    try:
        return tenants_with_email(session, email=email)
    finally:
        db.set_locals(session, {guc: ""})


def tenants_with_email(session: Session, *, email: str) -> list[uuid.UUID]:
    """The tenants with an active member of this email, oldest account first. Sees rows only
    in a transaction that names the email in `SIGN_IN_EMAIL_GUC` (migration 0023)."""
    rows = session.exec(
        select(Staff.tenant_id).where(Staff.email == email, _ACTIVE)
        .order_by(col(Staff.created_at), col(Staff.id))
    ).all()
    return list(dict.fromkeys(rows))


def locked_until(session: Session, *, email_digest: str) -> datetime | None:
    """When the lock on this email ends, if it is locked now."""
    row = session.get(SignInThrottle, email_digest)
    if row is None or row.locked_until is None or row.locked_until <= utcnow():
        return None
    return row.locked_until


def locks(session: Session, *, email_digests: list[str]) -> dict[str, datetime]:
    """Of these emails, the ones locked now and until when."""
    if not email_digests:
        return {}
    rows = session.exec(
        select(SignInThrottle).where(col(SignInThrottle.email_digest).in_(email_digests),
                                     col(SignInThrottle.locked_until) > utcnow())
    ).all()
    return {row.email_digest: row.locked_until for row in rows if row.locked_until}


def count_failure(
    session: Session, *, email_digest: str, window: timedelta, limit: int, lock: timedelta
) -> SignInThrottle:
    """Count one failed sign-in; the ``limit``-th within ``window`` locks the email for
    ``lock``. One statement, so concurrent failures are all counted."""
    now = utcnow()
    table = SignInThrottle.__table__  # type: ignore[attr-defined]
    stale = table.c.last_failure_at < now - window
    failures = case((stale, 1), else_=table.c.failures + 1)
    statement = (
        insert(SignInThrottle)
        .values(email_digest=email_digest, failures=1, last_failure_at=now,
                locked_until=now + lock if limit <= 1 else None)
        .on_conflict_do_update(
            index_elements=["email_digest"],
            set_={"failures": failures, "last_failure_at": now,
                  "locked_until": case((failures >= limit, now + lock), else_=None)},
        )
        .returning(SignInThrottle)
    )
    row: SignInThrottle = session.scalars(
        statement, execution_options={"populate_existing": True}).one()
    return row


def clear_failures(session: Session, *, email_digest: str) -> None:
    session.execute(delete(SignInThrottle).where(col(SignInThrottle.email_digest) == email_digest))
