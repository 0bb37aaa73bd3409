"""Adding, listing, removing staff and changing their role; checking a staff member's
password.

Every change is an audit event naming its actor; events carry the member's ID and role,
never the email or anything about the password.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlmodel import Session

from app.audit import service as audit
from app.staff import passwords, store
from app.staff.errors import LastOfficer, StaffEmailTaken, StaffNotFound
from app.staff.models import Staff, StaffRole
from app.staff.schemas import StaffList, StaffPublic, normalize_email


@dataclass(frozen=True)
class PreparedPassword:
    """A password's hash, computed before the transaction opens (Argon2 is slow on purpose),
    and the password itself when it was generated, to be shown once."""

    password_hash: str
    generated: str | None


def prepare_password(password: str | None) -> PreparedPassword:
    """Hash ``password``, or a generated one when it is None."""
    generated = passwords.generate() if password is None else None
    chosen = generated if generated is not None else password
    assert chosen is not None
    return PreparedPassword(password_hash=passwords.hash_password(chosen), generated=generated)


def create(
    session: Session, *, tenant_id: uuid.UUID, email: str, role: StaffRole,
    prepared: PreparedPassword, actor: str,
) -> Staff:
    """Add a member; `StaffEmailTaken` (409) when an active member has the email."""
    staff = store.insert_unless_taken(
        session, tenant_id=tenant_id, email=normalize_email(email), role=role,
        password_hash=prepared.password_hash,
    )
    if staff is None:
        raise StaffEmailTaken("An active staff member of this tenant has this email.")
    audit.record(session, tenant_id=tenant_id, actor=actor, action="staff.created",
                 target_kind="staff", target_id=staff.id,
                 details={"role": staff.role.value,
                          "password_generated": prepared.generated is not None})
    return staff


def members(
    session: Session, *, tenant_id: uuid.UUID, limit: int, cursor: str | None = None
) -> StaffList:
    rows, next_cursor = store.page(session, tenant_id=tenant_id, limit=limit, cursor=cursor)
    return StaffList(data=[StaffPublic.model_validate(row) for row in rows],
                     next_cursor=next_cursor)


def remove(session: Session, *, tenant_id: uuid.UUID, staff_id: uuid.UUID,
           actor: str) -> None:
    """Remove a member: they can no longer sign in; the row stays so the audit trail keeps
    naming them. Removing a removed member changes nothing. `LastOfficer` (409) for the
    tenant's last active officer, as for a demotion."""
    staff = _locked_member(session, tenant_id=tenant_id, staff_id=staff_id)
    if staff is None:
        raise StaffNotFound()
    if staff.removed_at is not None:
        return
    store.mark_removed(session, staff)
    audit.record(session, tenant_id=tenant_id, actor=actor, action="staff.removed",
                 target_kind="staff", target_id=staff.id, details={"role": staff.role.value})


def change_role(session: Session, *, tenant_id: uuid.UUID, staff_id: uuid.UUID,
                role: StaffRole, actor: str) -> Staff:
    """Make an active member an officer or a viewer; their console sessions end (they sign
    in again under the new role). `LastOfficer` (409) for the tenant's last active officer.
    The same role changes nothing."""
    staff = _locked_member(session, tenant_id=tenant_id, staff_id=staff_id, changing=role)
    if staff is None or staff.removed_at is not None:
        raise StaffNotFound()
    if staff.role is role:
        return staff
    previous = staff.role
    store.set_role(session, staff, role)
    audit.record(session, tenant_id=tenant_id, actor=actor, action="staff.role_changed",
                 target_kind="staff", target_id=staff.id,
                 details={"role": role.value, "previous_role": previous.value})
    return staff


def _locked_member(session: Session, *, tenant_id: uuid.UUID, staff_id: uuid.UUID,
                   changing: StaffRole | None = None) -> Staff | None:
    """The member, locked, about to be removed (``changing`` None) or given the role
    ``changing``; `LastOfficer` (409) when that would leave the tenant without an active
    officer: nobody would be left to manage staff in the console.

    Officers first, in ID order, then the member: every removal and demotion takes the
    locks in the same order, so two officers removing or demoting each other cannot both
    pass the count."""
    officers = store.lock_officers(session, tenant_id=tenant_id)
    staff = store.get(session, tenant_id=tenant_id, staff_id=staff_id, lock=True)
    if (staff is not None and staff.removed_at is None and changing is not StaffRole.officer
            and staff.role is StaffRole.officer and [o.id for o in officers] == [staff.id]):
        raise LastOfficer("This is the tenant's only officer: make another member an "
                          "officer first.")
    return staff


def member_id(session: Session, *, tenant_id: uuid.UUID, id_or_email: str) -> uuid.UUID:
    """The ID of the member named by their ID or by the email of an active member;
    `StaffNotFound` (404) when no member of the tenant has that email."""
    try:
        return uuid.UUID(id_or_email)
    except ValueError:
        pass
    staff = store.find_active(session, tenant_id=tenant_id, email=normalize_email(id_or_email))
    if staff is None:
        raise StaffNotFound()
    return staff.id


def emails(session: Session, *, tenant_id: uuid.UUID, staff_ids: list[uuid.UUID]
           ) -> dict[uuid.UUID, str]:
    """The emails of these members, removed ones included: who did what stays readable."""
    return store.emails(session, tenant_id=tenant_id, ids=staff_ids)


def verify_password(
    session: Session, *, tenant_id: uuid.UUID, email: str, password: str
) -> Staff | None:
    """The active member with this email and password, or None.

    An unknown email costs the same hashing as a wrong password, so timing does not tell
    which emails have accounts. A hash made with older parameters is replaced by one made
    with the current ones while the password is at hand.
    """
    staff = store.find_active(session, tenant_id=tenant_id, email=normalize_email(email))
    if staff is None:
        passwords.verify_nothing(password)
        return None
    if not passwords.verify(staff.password_hash, password):
        return None
    if passwords.needs_rehash(staff.password_hash):
        store.set_password_hash(session, staff, passwords.hash_password(password))
    return staff


def active_member(session: Session, *, tenant_id: uuid.UUID, staff_id: uuid.UUID
                  ) -> Staff | None:
    """The member if they exist and were not removed (a removed member's session ends)."""
    staff = store.get(session, tenant_id=tenant_id, staff_id=staff_id)
    return staff if staff is not None and staff.removed_at is None else None
