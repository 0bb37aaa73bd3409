from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from app.api import route
from app.api.deps import AppReader, AppWriter, SessionDep, derived_id
from app.artifacts import service
from app.artifacts.models import ArtifactStatus
from app.artifacts.schemas import ArtifactCreate, ArtifactList, ArtifactPublic
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses

router = APIRouter(
    prefix="/v1/artifacts", tags=["artifacts"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)
CreatedId = Annotated[uuid.UUID | None, Depends(derived_id("artifact"))]


@router.post("", status_code=201)
def register_artifact(
    body: ArtifactCreate, principal: AppWriter, session: SessionDep, artifact_id: CreatedId
) -> ArtifactPublic:
    """Register something derived from memories, to be told when to erase it."""
    return service.register(session, tenant_id=principal.tenant_id, body=body,
                            actor=audit.actor_for(principal), artifact_id=artifact_id)


@router.get("")
def list_artifacts(
    principal: AppReader,
    session: SessionDep,
    derived_from: uuid.UUID | None = None,
    status: ArtifactStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> ArtifactList:
    """List artifacts oldest first, optionally those derived from one memory."""
    return service.page(session, tenant_id=principal.tenant_id, derived_from=derived_from,
                        status=status, limit=limit, cursor=cursor)


@router.get("/{artifact_id}")
def read_artifact(
    artifact_id: uuid.UUID, principal: AppReader, session: SessionDep
) -> ArtifactPublic:
    """Read an artifact and the state of its erasure."""
    return service.get(session, tenant_id=principal.tenant_id, artifact_id=artifact_id)


@router.delete("/{artifact_id}", status_code=204)
def withdraw_artifact(
    artifact_id: uuid.UUID, principal: AppWriter, session: SessionDep
) -> Response:
    """Unregister an artifact (one whose erasure was requested counts as erased)."""
    service.withdraw(session, tenant_id=principal.tenant_id, artifact_id=artifact_id,
                     actor=audit.actor_for(principal))
    return Response(status_code=204)


@router.post("/{artifact_id}/erased")
def acknowledge_erasure(
    artifact_id: uuid.UUID, principal: AppWriter, session: SessionDep
) -> ArtifactPublic:
    """Acknowledge that the artifact was erased, as its erasure was requested."""
    return service.acknowledge(session, tenant_id=principal.tenant_id, artifact_id=artifact_id,
                               actor=audit.actor_for(principal))
