from __future__ import annotations

from fastapi import APIRouter, Depends, status

from app.api import route
from app.api.deps import NewTenantId, SessionDep, not_replayed
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.tenants import service
from app.tenants.models import Role
from app.tenants.schemas import ApiKeysOnce, TenantCreate, TenantCreated

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
