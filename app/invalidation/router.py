from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from app.api import route
from app.api.deps import AppReader, AppWriter, SessionDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency.schemas import OperationAccepted
from app.invalidation import service
from app.invalidation.schemas import (
    DependencyChanged,
    DependencyList,
    DependencyPublic,
    DependencyPut,
)

router = APIRouter(
    prefix="/v1/dependencies", tags=["dependencies"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)
Key = Annotated[str, Path(min_length=1, max_length=255, pattern=r"^[^\x00]+$")]


@router.put("/{key}")
def put_dependency(
    key: Key, body: DependencyPut, principal: AppWriter, session: SessionDep
) -> DependencyChanged:
    """Set a dependency's value; a change queues the invalidation of dependent memories."""
    row, operation = service.put(session, tenant_id=principal.tenant_id, key=key,
                                 value=body.value)
    return DependencyChanged(
        key=row.key, value=row.value, changed=operation is not None,
        invalidation=OperationAccepted.of(operation) if operation is not None else None,
    )


@router.get("")
def list_dependencies(principal: AppReader, session: SessionDep) -> DependencyList:
    """Every dependency's current value."""
    rows = service.listing(session, tenant_id=principal.tenant_id)
    return DependencyList(data=[DependencyPublic.model_validate(r, from_attributes=True)
                                for r in rows])
