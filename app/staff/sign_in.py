"""Signing staff in to the console: email and password, slowed and locked on failures.

The email names no tenant, so the accounts are found first (the one read migration 0023
allows), then each tenant's account is checked in a transaction scoped to that tenant. Failed
attempts are counted per email, whether or not it has an account, so neither the answer nor
the lock tells a guesser which emails exist; each failure against a real account, and each
lock, is audited in that account's tenant.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session

from app.audit import service as audit
from app.core import uow
from app.core.runtime import get_runtime
from app.staff import passwords, service, store
from app.staff.errors import LockShared, StaffNotFound
from app.staff.models import Staff
from app.staff.schemas import EMAIL_MAX, StaffPublic, normalize_email

SIGN_IN_EMAIL_GUC = "lethe.sign_in_email"
MAX_FAILURES = 5
FAILURE_WINDOW = timedelta(minutes=15)
LOCK_DURATION = timedelta(minutes=15)
# Each failure in the window slows the next answer a little more: a guesser gets a handful
# of tries a minute before the lock, a person who mistyped barely notices.
DELAY_PER_FAILURE_SECONDS = 0.25
MAX_DELAY_SECONDS = 2.0
ACTOR = audit.system_actor("console-sign-in")


@dataclass(frozen=True)
class SignInResult:
    """``staff`` on success; otherwise ``locked_until`` when the email is locked, and how long
    the caller should wait before answering."""

    staff: Staff | None
    locked_until: datetime | None = None
    delay_seconds: float = 0.0


def email_digest(email: str) -> str:
    # Keyed, so the throttle table cannot be matched against a list of known emails.
    key = get_runtime().secret_key.encode()
    return hmac.new(key, b"staff-sign-in:" + email.encode(), hashlib.sha256).hexdigest()


def attempt(*, email: str, password: str) -> SignInResult:
    """Check ``email`` and ``password``; the member whose password it is, or a refusal."""
    email = normalize_email(email.strip())
    if not email or len(email) > EMAIL_MAX or len(password) > passwords.MAX_LENGTH:
        return SignInResult(staff=None)
    digest = email_digest(email)
    with uow.unit_of_work(settings={SIGN_IN_EMAIL_GUC: email}) as session:
        locked = store.locked_until(session, email_digest=digest)
        tenant_ids = [] if locked else store.tenants_with_email(session, email=email)
    if locked is not None:
        # No password check while locked: a locked email costs the server nothing.
        return SignInResult(staff=None, locked_until=locked)
    if not tenant_ids:
        passwords.verify_nothing(password)
    for tenant_id in tenant_ids:
        with uow.unit_of_work(tenant_id) as session:
            staff = service.verify_password(session, tenant_id=tenant_id, email=email,
                                            password=password)
            if staff is not None:
                audit.record(session, tenant_id=tenant_id, actor=audit.staff_actor(staff.id),
                             action="staff.signed_in", target_kind="staff",
                             target_id=staff.id, details={"role": staff.role.value})
                store.clear_failures(session, email_digest=digest)
                return SignInResult(staff=staff)
    return _failed(email, digest, tenant_ids)


def _failed(email: str, digest: str, tenant_ids: list[uuid.UUID]) -> SignInResult:
    with uow.unit_of_work() as session:
        row = store.count_failure(session, email_digest=digest, window=FAILURE_WINDOW,
                                  limit=MAX_FAILURES, lock=LOCK_DURATION)
    just_locked = row.failures == MAX_FAILURES and row.locked_until is not None
    for tenant_id in tenant_ids:
        with uow.unit_of_work(tenant_id) as session:
            staff = store.find_active(session, tenant_id=tenant_id, email=email)
            if staff is None:
                continue
            audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                         action="staff.sign_in_failed", target_kind="staff", target_id=staff.id,
                         details={"failures": row.failures})
            if just_locked:
                audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                             action="staff.sign_in_locked", target_kind="staff",
                             target_id=staff.id,
                             details={"failures": row.failures,
                                      "minutes": int(LOCK_DURATION.total_seconds() // 60)})
    delay = min(DELAY_PER_FAILURE_SECONDS * row.failures, MAX_DELAY_SECONDS)
    return SignInResult(staff=None, locked_until=row.locked_until, delay_seconds=delay)


def signed_out(*, tenant_id: uuid.UUID, staff_id: uuid.UUID, generation: int) -> bool:
    """End the member's console sessions of ``generation`` on the server and audit it; False
    (nothing audited) when they had already ended. The cookie is the caller's to clear."""
    with uow.unit_of_work(tenant_id) as session:
        if not store.end_session(session, tenant_id=tenant_id, staff_id=staff_id,
                                 generation=generation):
            return False
        audit.record(session, tenant_id=tenant_id, actor=audit.staff_actor(staff_id),
                     action="staff.signed_out", target_kind="staff", target_id=staff_id)
    return True


def locked(session: Session, *, members: Iterable[StaffPublic]) -> dict[uuid.UUID, datetime]:
    """When each of these members' email stops being locked, for those locked now."""
    digests = {email_digest(member.email): member.id for member in members}
    found = store.locks(session, email_digests=list(digests))
    return {digests[digest]: until for digest, until in found.items()}


def unlock(session: Session, *, tenant_id: uuid.UUID, staff_id: uuid.UUID, actor: str) -> bool:
    """Lift the sign-in lock on an active member's email (its failure count too), audited;
    False when it was not locked. `LockShared` (409) when the email also has an account in
    another tenant: the lock is per email, and an officer vouches for their own member only —
    otherwise adding a member with someone else's email and unlocking it again and again
    would let one tenant's officer keep guessing another tenant's password. That lock lifts
    by itself."""
    staff = service.active_member(session, tenant_id=tenant_id, staff_id=staff_id)
    if staff is None:
        raise StaffNotFound()
    digest = email_digest(staff.email)
    until = store.locked_until(session, email_digest=digest)
    if until is None:
        return False
    if set(store.tenants_with_email_in(session, email=staff.email,
                                       guc=SIGN_IN_EMAIL_GUC)) - {tenant_id}:
        raise LockShared(f"The lock lifts by itself at {until:%H:%M} UTC.")
    store.clear_failures(session, email_digest=digest)
    audit.record(session, tenant_id=tenant_id, actor=actor, action="staff.unlocked",
                 target_kind="staff", target_id=staff.id)
    return True
