"""A tenant's API keys: create, list, delete (revoke).

Rotation is a create followed by a delete of the old key once its users have the new one.
A deleted key stops working with the commit of its deletion, because every request looks its
key up afresh (`lethe_api_key`); its row stays, revoked, for the audit trail. The tenant's
last working compliance key cannot be deleted: without one nobody could manage keys again.
"""

from __future__ import annotations

import uuid

from sqlmodel import Session

from app.audit import service as audit
from app.tenants import key_store
from app.tenants.errors import ApiKeyNotFound, LastComplianceKey
from app.tenants.models import ApiKey, Role
from app.tenants.schemas import ApiKeyList, ApiKeyPublic


def create(session: Session, *, tenant_id: uuid.UUID, role: Role,
           actor: str) -> tuple[ApiKey, str]:
    """A new key and its secret, which only this answer ever holds."""
    key, raw = key_store.add(session, tenant_id=tenant_id, role=role)
    session.flush()
    audit.record(session, tenant_id=tenant_id, actor=actor, action="api_key.created",
                 target_kind="api_key", target_id=key.id, details={"role": role.value})
    return key, raw


def working_keys(
    session: Session, *, tenant_id: uuid.UUID, limit: int, cursor: str | None = None
) -> ApiKeyList:
    rows, next_cursor = key_store.page(session, tenant_id=tenant_id, limit=limit,
                                       cursor=cursor)
    return ApiKeyList(data=[ApiKeyPublic.model_validate(row) for row in rows],
                      next_cursor=next_cursor)


def described(session: Session, *, tenant_id: uuid.UUID, key_ids: list[uuid.UUID]
              ) -> dict[uuid.UUID, tuple[Role, str]]:
    """Role and display prefix of these keys, revoked ones included (audit trails name
    them long after)."""
    return key_store.described(session, tenant_id=tenant_id, ids=key_ids)


def revoke(session: Session, *, tenant_id: uuid.UUID, key_id: uuid.UUID, actor: str) -> None:
    """Delete a key: it stops working at commit. `LastComplianceKey` (409) for the tenant's
    last working compliance key; deleting a deleted key changes nothing."""
    working = key_store.lock_active(session, tenant_id=tenant_id)
    key = next((k for k in working if k.id == key_id), None)
    if key is None:
        if key_store.get(session, tenant_id=tenant_id, key_id=key_id) is None:
            raise ApiKeyNotFound()
        return
    compliance = [k for k in working if k.role is Role.compliance]
    if key.role is Role.compliance and len(compliance) == 1:
        raise LastComplianceKey(
            "This is the tenant's last compliance key: create another before deleting it."
        )
    key_store.revoke(session, key)
    audit.record(session, tenant_id=tenant_id, actor=actor, action="api_key.revoked",
                 target_kind="api_key", target_id=key.id, details={"role": key.role.value})
