from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from app.api import route
from app.api.deps import (
    ComplianceReader,
    ComplianceWriter,
    NewTenantId,
    SessionDep,
    not_replayed,
)
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.tenants import keys, service
from app.tenants.models import Role
from app.tenants.schemas import (
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyList,
    ApiKeysOnce,
    TenantCreate,
    TenantCreated,
)

router = APIRouter(
    prefix="/v1/tenants",
    tags=["tenants"],
    route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


# The keys are shown once: a replay answers them as null.
@router.post("", status_code=status.HTTP_201_CREATED,
             dependencies=[Depends(not_replayed("api_keys"))])
def create_tenant(body: TenantCreate, tenant_id: NewTenantId, session: SessionDep
                  ) -> TenantCreated:
    """Create a tenant and its two API keys (admin token)."""
    created = service.create_tenant(session, name=body.name, tenant_id=tenant_id)
    keys = created.keys
    return TenantCreated(
        id=created.tenant.id,
        name=created.tenant.name,
        api_keys=ApiKeysOnce(app=keys[Role.app], compliance=keys[Role.compliance])
        if keys else None,
    )


keys_router = APIRouter(
    prefix="/v1/api-keys",
    tags=["api keys"],
    route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


# The key is shown once: a replay answers it as null.
@keys_router.post("", status_code=status.HTTP_201_CREATED,
                  dependencies=[Depends(not_replayed("key"))])
def create_api_key(body: ApiKeyCreate, principal: ComplianceWriter, session: SessionDep
                   ) -> ApiKeyCreated:
    """Create an API key of a role; the key is shown once (compliance key)."""
    key, raw = keys.create(session, tenant_id=principal.tenant_id, role=body.role,
                           actor=audit.actor_for(principal))
    return ApiKeyCreated(id=key.id, role=key.role, prefix=key.prefix,
                         created_at=key.created_at, key=raw)


@keys_router.get("")
def list_api_keys(
    principal: ComplianceReader,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> ApiKeyList:
    """List the tenant's working API keys, oldest first (compliance key)."""
    return keys.working_keys(session, tenant_id=principal.tenant_id, limit=limit,
                             cursor=cursor)


@keys_router.delete("/{key_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_api_key(key_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep
                   ) -> Response:
    """Delete an API key: it stops working at once; the last compliance key stays."""
    keys.revoke(session, tenant_id=principal.tenant_id, key_id=key_id,
                actor=audit.actor_for(principal))
    return Response(status_code=status.HTTP_204_NO_CONTENT)
