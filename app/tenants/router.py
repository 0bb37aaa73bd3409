from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Request, status
from starlette.concurrency import run_in_threadpool

from app.core import uow
from app.core.deps import AdminDep, IdempotencyKeyHeader, WorkDep, expect_key
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency import service as idempotency
from app.tenants import service
from app.tenants.models import Role
from app.tenants.schemas import ApiKeysOnce, TenantCreate, TenantCreated

router = APIRouter(
    prefix="/v1/tenants",
    tags=["tenants"],
    route_class=uow.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_tenant(
    request: Request,
    body: TenantCreate,
    work: WorkDep,
    _: AdminDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> TenantCreated:
    """Create a tenant and its two API keys (admin token)."""
    tenant_id: uuid.UUID | None = None
    if idempotency_key is not None:
        # No tenant exists yet to scope the key to, so the key names the tenant it creates.
        tenant_id = idempotency.derive_id(idempotency.ID_NAMESPACE, idempotency_key, "tenant")
        work.tenant_id = tenant_id
        await expect_key(request, tenant_id, idempotency_key)
        work.redact = _without_keys

    def create() -> service.CreatedTenant:
        return service.create_tenant(work.open(), name=body.name, tenant_id=tenant_id)

    created = await run_in_threadpool(create)
    keys = created.keys
    return TenantCreated(
        id=created.tenant.id,
        name=created.tenant.name,
        api_keys=ApiKeysOnce(app=keys[Role.app], compliance=keys[Role.compliance])
        if keys else None,
    )


def _without_keys(body: Any) -> Any:
    return {**body, "api_keys": None} if isinstance(body, dict) else body
