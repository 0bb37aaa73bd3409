from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.api import route
from app.api.deps import AppReader, AppWriter, ComplianceWriter, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.sources import service as sources
from app.sources.schemas import ExclusionCreate, ExclusionList, ExclusionPublic

router = APIRouter(
    tags=["forgetting"], route_class=route.LetheRoute, responses=problem_responses(*COMMON_PROBLEMS)
)


@router.post(
    "/v1/sources/exclusions",
    status_code=status.HTTP_201_CREATED,
    responses={200: {"model": ExclusionPublic, "description": "Already excluded"}},
)
def create_exclusion(
    body: ExclusionCreate, principal: AppWriter, session: SessionDep, response: Response
) -> ExclusionPublic:
    """Exclude a source: every later write citing it is refused (201; 200 if already)."""
    exclusion, created = sources.exclude(
        session, tenant_id=principal.tenant_id, source=body.source, reason=body.reason,
        actor=audit.actor_for(principal),
    )
    response.status_code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
    return sources.public(exclusion)


@router.get("/v1/sources/exclusions")
def list_exclusions(
    principal: AppReader,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> ExclusionList:
    """List excluded sources, oldest first."""
    return sources.exclusions(session, tenant_id=principal.tenant_id, limit=limit,
                              cursor=cursor)


@router.delete("/v1/sources/exclusions/{exclusion_id}", status_code=204)
def delete_exclusion(
    exclusion_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep
) -> Response:
    """Readmit a source (compliance key); audited."""
    sources.remove(session, tenant_id=principal.tenant_id, exclusion_id=exclusion_id,
                   actor=audit.actor_for(principal))
    return Response(status_code=status.HTTP_204_NO_CONTENT)
