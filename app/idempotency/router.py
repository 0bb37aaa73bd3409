from __future__ import annotations

import uuid

from fastapi import APIRouter

from app.api import route
from app.api.deps import AppReader, SessionDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency import service
from app.idempotency.schemas import OperationPublic

router = APIRouter(prefix="/v1/operations", tags=["operations"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.get("/{operation_id}")
def read_operation(
    operation_id: uuid.UUID, principal: AppReader, session: SessionDep
) -> OperationPublic:
    """Status and result of an operation."""
    operation = service.read(session, tenant_id=principal.tenant_id, operation_id=operation_id)
    return OperationPublic.model_validate(operation)
