"""Creating tenants and authenticating their keys."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import Connection, text
from sqlmodel import Session, col, select

from app.core import db, security, uow
from app.keys import tenant_keys
from app.tenant_settings import service as tenant_settings
from app.tenants import key_store
from app.tenants.models import Role, Tenant


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
    # Before the commit: a tenant must never exist without its key. A rolled-back creation
    # leaves a key that names no tenant, which opens nothing.
    tenant_keys.create_tenant_key(tenant_id)
    keys = {role: key_store.add(session, tenant_id=tenant_id, role=role)[1] for role in Role}
    tenant_settings.create_defaults(session, tenant_id=tenant_id)
    session.flush()
    return CreatedTenant(tenant=tenant, keys=keys, existed=False)


def exists(session: Session, *, tenant_id: uuid.UUID) -> bool:
    """Whether the tenant exists (``session`` scoped to it: row-level security hides others)."""
    return session.get(Tenant, tenant_id) is not None


def name_of(session: Session, *, tenant_id: uuid.UUID) -> str | None:
    """The tenant's name, or None when it does not exist (or ``session`` is scoped elsewhere)."""
    tenant = session.get(Tenant, tenant_id)
    return None if tenant is None else tenant.name


# Names the key's hash and reads its row in one statement (migration 0007_key_lookup).
_KEY_SQL = text("SELECT id, tenant_id, role FROM lethe_api_key(:key_hash)")


def authenticate(session: Session, *, raw_key: str) -> Principal | None:
    """Find the key and scope the rest of the transaction to its tenant; None when unknown
    or revoked. Afterwards the transaction can no longer read the key row by its hash."""
    principal = _lookup(session, raw_key)
    if principal is not None:
        db.set_locals(session, {db.AUTH_GUC: "", db.TENANT_GUC: str(principal.tenant_id)})
    return principal


def authenticate_alone(conn: Connection, *, raw_key: str) -> Principal | None:
    """Find the key in one autocommit statement (`db.autocommit()`): what the API does before
    every request, so it costs one round trip and leaves no setting behind."""
    return _lookup(conn, raw_key)


def _lookup(conn: Session | Connection, raw_key: str) -> Principal | None:
    row = conn.execute(_KEY_SQL, {"key_hash": security.hash_key(raw_key)}).first()
    if row is None:
        return None
    return Principal(tenant_id=row.tenant_id, key_id=row.id, role=Role(row.role))


def all_tenants() -> list[Tenant]:
    """Every tenant, oldest first, for the operator's `lethe tenants list`."""
    with uow.unit_of_work(maintenance=True) as session:
        tenants = list(session.exec(select(Tenant).order_by(col(Tenant.created_at))).all())
        for tenant in tenants:
            session.expunge(tenant)
        return tenants


def all_tenant_ids() -> list[uuid.UUID]:
    """Every tenant's ID, for beat jobs that then work per tenant under row-level security."""
    with uow.unit_of_work(maintenance=True) as session:
        return list(session.exec(select(Tenant.id).order_by(col(Tenant.created_at))).all())
