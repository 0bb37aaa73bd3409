from __future__ import annotations

import uuid

from fastapi import APIRouter

from app.core import uow
from app.core.deps import AppReader, SessionDep
from app.core.errors import COMMON_PROBLEMS, NotFound, problem_responses
from app.idempotency.models import Operation
from app.idempotency.schemas import OperationPublic

router = APIRouter(prefix="/v1/operations", tags=["operations"], route_class=uow.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.get("/{operation_id}")
def read_operation(
    operation_id: uuid.UUID, principal: AppReader, session: SessionDep
) -> OperationPublic:
    """Status and result of an operation."""
    operation = session.get(Operation, operation_id)
    if operation is None or operation.tenant_id != principal.tenant_id:
        raise NotFound("No such operation.")
    return OperationPublic.model_validate(operation)
