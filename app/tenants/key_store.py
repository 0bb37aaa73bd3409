"""Every statement on `api_key` apart from the lookup (`lethe_api_key`, migrations 0007 and
0015)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlmodel import Session, col, select

from app.core import paging, security
from app.core.models import utcnow
from app.tenants.models import ApiKey, Role


def add(session: Session, *, tenant_id: uuid.UUID, role: Role) -> tuple[ApiKey, str]:
    """A new key of ``role``: its row (holding only the hash) and the key itself, which
    exists nowhere else and is shown once."""
    key_id = uuid.uuid4()
    raw = security.generate_api_key(role.value, key_id)
    key = ApiKey(id=key_id, tenant_id=tenant_id, role=role, key_hash=security.hash_key(raw),
                 prefix=security.key_prefix(key_id))
    session.add(key)
    return key, raw


def lock_active(session: Session, *, tenant_id: uuid.UUID) -> Sequence[ApiKey]:
    """The tenant's keys that still work, locked in ID order: two deletions of the tenant's
    last two compliance keys take turns, and the second sees the first's effect."""
    return session.exec(
        select(ApiKey)
        .where(ApiKey.tenant_id == tenant_id, col(ApiKey.revoked_at).is_(None))
        .order_by(col(ApiKey.id))
        .with_for_update()
    ).all()


def get(session: Session, *, tenant_id: uuid.UUID, key_id: uuid.UUID) -> ApiKey | None:
    return session.exec(
        select(ApiKey).where(ApiKey.tenant_id == tenant_id, ApiKey.id == key_id)
    ).first()


def described(session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID]
              ) -> dict[uuid.UUID, tuple[Role, str]]:
    """Each key's role and display prefix, revoked keys included (audit events outlive
    them)."""
    if not ids:
        return {}
    rows = session.exec(select(ApiKey.id, ApiKey.role, ApiKey.prefix).where(
        ApiKey.tenant_id == tenant_id, col(ApiKey.id).in_(sorted(set(ids))))).all()
    return {key_id: (Role(role), prefix) for key_id, role, prefix in rows}


def revoke(session: Session, key: ApiKey) -> None:
    key.revoked_at = utcnow()
    session.add(key)
    session.flush()


def page(
    session: Session, *, tenant_id: uuid.UUID, limit: int, cursor: str | None
) -> tuple[Sequence[ApiKey], str | None]:
    """Keys that still work, oldest first by (created_at, id); the cursor is the last ID of
    the previous page, and one naming no key of this tenant ends the listing."""
    statement = select(ApiKey).where(ApiKey.tenant_id == tenant_id,
                                     col(ApiKey.revoked_at).is_(None))
    return paging.page(session, statement, ApiKey, tenant_id=tenant_id, limit=limit,
                       cursor=cursor)


