from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from app.api import route
from app.api.deps import AppWriter, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.forgetting.forget import forget_memory, forget_this
from app.forgetting.schemas import ForgetBody, ForgetResult
from app.memories.schemas import RedactedAnswer

router = APIRouter(
    tags=["forgetting"], route_class=route.LetheRoute, responses=problem_responses(*COMMON_PROBLEMS)
)


@router.post("/v1/memories/{memory_id}/forget")
def forget(
    memory_id: uuid.UUID, body: ForgetBody, principal: AppWriter, session: SessionDep
) -> ForgetResult | RedactedAnswer:
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
    forget_this(session, tenant_id=principal.tenant_id, memory_id=memory_id,
                actor=audit.actor_for(principal))
    return Response(status_code=status.HTTP_204_NO_CONTENT)
