from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.audit import service as audit
from app.core import uow
from app.core.deps import AppReader, AppWriter, ComplianceWriter, SessionDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.forgetting import sources
from app.forgetting.forget import forget_memory
from app.forgetting.schemas import (
    ExclusionCreate,
    ExclusionList,
    ExclusionPublic,
    ForgetBody,
    ForgetResult,
)

router = APIRouter(
    tags=["forgetting"], route_class=uow.LetheRoute, responses=problem_responses(*COMMON_PROBLEMS)
)


@router.post("/v1/memories/{memory_id}/forget")
def forget(
    memory_id: uuid.UUID, body: ForgetBody, principal: AppWriter, session: SessionDep
) -> ForgetResult:
    """Forget a memory: tombstone it and/or exclude its source."""
    outcome = forget_memory(
        session, tenant_id=principal.tenant_id, memory_id=memory_id, delete=body.delete,
        exclude_source=body.exclude_source, about=body.about, reason=body.reason,
        actor=audit.actor_for(principal),
    )
    return ForgetResult(
        id=outcome.id, forgotten=outcome.forgotten, excluded_source=outcome.excluded_source,
        retraction_id=outcome.retraction_id, already_forgotten=outcome.already_forgotten,
    )


@router.delete("/v1/memories/{memory_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_memory(
    memory_id: uuid.UUID, principal: AppWriter, session: SessionDep
) -> Response:
    """Forget this: tombstone it and exclude its source (again: still 204)."""
    forget_memory(
        session, tenant_id=principal.tenant_id, memory_id=memory_id, delete=True,
        exclude_source=True, about=None, reason="delete", actor=audit.actor_for(principal),
        require_source=False,
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


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
    return ExclusionPublic.model_validate(exclusion, from_attributes=True)


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
