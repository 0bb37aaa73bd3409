from __future__ import annotations

from fastapi import APIRouter

from app.api import route
from app.api.deps import AppReader, ComplianceWriter, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.limits import service as limits
from app.tenant_settings import service
from app.tenant_settings.schemas import SettingsPatch, SettingsPublic

router = APIRouter(prefix="/v1/settings", tags=["settings"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.get("")
def read_settings(principal: AppReader, session: SessionDep) -> SettingsPublic:
    """Read this tenant's settings."""
    return service.get(session, tenant_id=principal.tenant_id)


@router.patch("")
def update_settings(
    body: SettingsPatch, principal: ComplianceWriter, session: SessionDep
) -> SettingsPublic:
    """Change this tenant's settings (compliance key); nested objects merge."""
    updated = service.update(session, tenant_id=principal.tenant_id, patch=body,
                             actor=audit.actor_for(principal))
    # This process applies new limits at once; others within their cache's few seconds.
    limits.forget_cached(principal.tenant_id)
    return updated
