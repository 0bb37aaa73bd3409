"""Creating tenants and authenticating their keys."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlmodel import Session, col, select

from app.core import db, security
from app.settings import service as tenant_settings
from app.tenants.models import ApiKey, Role, Tenant


@dataclass(frozen=True)
class Principal:
    """Who is calling: the tenant the transaction is scoped to, the key and its role."""

    tenant_id: uuid.UUID
    key_id: uuid.UUID
    role: Role


@dataclass(frozen=True)
class CreatedTenant:
    tenant: Tenant
    keys: dict[Role, str] | None
    existed: bool


def create_tenant(
    session: Session, *, name: str, tenant_id: uuid.UUID | None = None
) -> CreatedTenant:
    """Create a tenant with one key per role and default settings.

    With a ``tenant_id`` derived from an Idempotency-Key, a second call finds the tenant and
    returns it without keys: they were shown once and only their hashes exist.
    """
    tenant_id = tenant_id or uuid.uuid4()
    db.set_tenant(session, tenant_id)
    existing = session.get(Tenant, tenant_id)
    if existing is not None:
        return CreatedTenant(tenant=existing, keys=None, existed=True)
    tenant = Tenant(id=tenant_id, name=name)
    session.add(tenant)
    session.flush()
    keys: dict[Role, str] = {}
    for role in Role:
        raw = security.generate_api_key(role.value)
        keys[role] = raw
        session.add(
            ApiKey(
                tenant_id=tenant_id,
                role=role,
                key_hash=security.hash_key(raw),
                prefix=security.display_prefix(raw),
            )
        )
    tenant_settings.create_defaults(session, tenant_id=tenant_id)
    session.flush()
    return CreatedTenant(tenant=tenant, keys=keys, existed=False)


def authenticate(
    session: Session, *, raw_key: str, scope_to_tenant: bool = True
) -> Principal | None:
    """Find the key; None when unknown or revoked.

    With ``scope_to_tenant`` the rest of the transaction works in the key's tenant and can no
    longer read the key row by its hash. The API authenticates in a transaction of its own
    that ends right away, so it skips both round trips.
    """
    key_hash = security.hash_key(raw_key)
    db.set_local(session, db.AUTH_GUC, key_hash)
    key = session.exec(
        select(ApiKey).where(ApiKey.key_hash == key_hash, ApiKey.revoked_at.is_(None))  # type: ignore[union-attr]
    ).first()
    if key is None:
        return None
    if scope_to_tenant:
        db.set_local(session, db.AUTH_GUC, "")
        db.set_tenant(session, key.tenant_id)
    return Principal(tenant_id=key.tenant_id, key_id=key.id, role=key.role)


def all_tenant_ids() -> list[uuid.UUID]:
    """Every tenant's ID, for beat jobs that then work per tenant under row-level security."""
    with db.maintenance_scope() as session:
        return list(session.exec(select(Tenant.id).order_by(col(Tenant.created_at))).all())
