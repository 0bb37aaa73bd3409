from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from starlette.concurrency import run_in_threadpool

from app.core import db, uow
from app.core.deps import AdminDep, IdempotencyKeyHeader, SessionDep, claim_key
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency import service as idempotency
from app.tenants import service
from app.tenants.models import Role
from app.tenants.schemas import ApiKeysOnce, TenantCreate, TenantCreated

router = APIRouter(prefix="/v1/tenants", tags=["tenants"], route_class=uow.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
)
async def create_tenant(
    request: Request,
    body: TenantCreate,
    session: SessionDep,
    _: AdminDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> TenantCreated:
    """Create a tenant and its two API keys (admin token)."""
    tenant_id = None
    if idempotency_key is not None:
        # No tenant exists yet to scope the key to, so the key names the tenant it creates.
        idempotency.validate_key(idempotency_key)
        tenant_id = idempotency.derive_id(idempotency.ID_NAMESPACE, idempotency_key, "tenant")
        db.set_tenant(session, tenant_id)
        await claim_key(request, tenant_id, idempotency_key)
        uow.current(request).redact = _without_keys
    created = await run_in_threadpool(
        lambda: service.create_tenant(session, name=body.name, tenant_id=tenant_id)
    )
    keys = created.keys
    return TenantCreated(
        id=created.tenant.id,
        name=created.tenant.name,
        api_keys=ApiKeysOnce(app=keys[Role.app], compliance=keys[Role.compliance])
        if keys else None,
    )


def _without_keys(body: Any) -> Any:
    return {**body, "api_keys": None} if isinstance(body, dict) else body



