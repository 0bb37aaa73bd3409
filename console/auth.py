"""Who may use the console: compliance keys, re-checked on every page."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlmodel import Session

from app.tenants import service as tenants
from app.tenants.models import ApiKey, Role, Tenant
from app.tenants.service import Principal
from console.session import ConsoleSession


@dataclass(frozen=True)
class Viewer:
    """A signed-in compliance officer, as the pages need them."""

    tenant_id: uuid.UUID
    tenant_name: str
    key_id: uuid.UUID
    session: ConsoleSession

    @property
    def is_officer(self) -> bool:
        """Every compliance key acts as an officer (viewers come with staff sign-in)."""
        return True

    @property
    def actor(self) -> str:
        """The audit actor for whatever this officer does (their key, until staff sign in)."""
        return f"key:{self.key_id}"


def sign_in(session: Session, *, raw_key: str) -> Principal | None:
    """The principal of a compliance key; None for app keys, unknown or revoked keys."""
    principal = tenants.authenticate(session, raw_key=raw_key)
    if principal is None or principal.role is not Role.compliance:
        return None
    return principal


def viewer(session: Session, *, login: ConsoleSession) -> Viewer | None:
    """Resolve a verified cookie; None when its key was revoked or is not a compliance key.

    ``session`` must be scoped to ``login.tenant_id``: row-level security then hides any key
    or tenant row of another tenant, so a cookie can never reach across tenants.
    """
    key = session.get(ApiKey, login.key_id)
    if (
        key is None
        or key.revoked_at is not None
        or key.role is not Role.compliance
        or key.tenant_id != login.tenant_id
    ):
        return None
    tenant = session.get(Tenant, login.tenant_id)
    if tenant is None:
        return None
    return Viewer(
        tenant_id=tenant.id, tenant_name=tenant.name, key_id=key.id, session=login
    )
