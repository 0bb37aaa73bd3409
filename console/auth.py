"""Who is signed in to the console: a staff member, re-checked on every page."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlmodel import Session

from app.audit import service as audit
from app.staff import service as staff_service
from app.staff.models import StaffRole
from app.tenant_settings import service as tenant_settings
from app.tenants import service as tenants
from console.session import ConsoleSession


@dataclass(frozen=True)
class Viewer:
    """A signed-in staff member, as the pages need them (officer or viewer)."""

    tenant_id: uuid.UUID
    tenant_name: str
    staff_id: uuid.UUID
    email: str
    role: StaffRole
    session: ConsoleSession
    idle_timeout: timedelta

    @property
    def is_officer(self) -> bool:
        return self.role is StaffRole.officer

    @property
    def actor(self) -> str:
        """The audit actor for whatever this member does (``staff:<id>``)."""
        return audit.staff_actor(self.staff_id)

    @property
    def idle_expires_at(self) -> datetime:
        """When the session ends if nothing else happens (this page just renewed it)."""
        return min(datetime.now(UTC) + self.idle_timeout, self.session.hard_expires_at)


def idle_timeout(session: Session, *, tenant_id: uuid.UUID) -> timedelta:
    minutes = tenant_settings.get(session, tenant_id=tenant_id).console.session_minutes
    return timedelta(minutes=minutes)


def viewer(session: Session, *, login: ConsoleSession, now: datetime | None = None
           ) -> Viewer | None:
    """Resolve a verified cookie; None when the session ended on the server (signed out, the
    member removed or their role changed), the tenant is gone, or the session sat idle
    longer than the tenant allows.

    ``session`` must be scoped to ``login.tenant_id``: row-level security then hides any
    staff or tenant row of another tenant, so a cookie can never reach across tenants.
    """
    staff = staff_service.active_member(session, tenant_id=login.tenant_id,
                                        staff_id=login.staff_id)
    if staff is None or staff.session_generation != login.generation:
        return None
    name = tenants.name_of(session, tenant_id=login.tenant_id)
    if name is None:
        return None
    timeout = idle_timeout(session, tenant_id=login.tenant_id)
    if (now or datetime.now(UTC)) - login.last_active_at > timeout:
        return None
    return Viewer(tenant_id=login.tenant_id, tenant_name=name, staff_id=staff.id,
                  email=staff.email, role=staff.role, session=login, idle_timeout=timeout)
