from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.core.schemas import NonBlank, StrictModel
from app.idempotency.schemas import OperationAccepted


class DependencyPut(StrictModel):
    value: NonBlank = Field(min_length=1, max_length=255, description="The new current value.")


class DependencyPublic(BaseModel):
    key: str
    value: str
    updated_at: datetime


class DependencyChanged(BaseModel):
    key: str
    value: str
    changed: bool
    invalidation: OperationAccepted | None = Field(
        description="The job marking memories that depend on another value suspect; poll "
        "`/v1/operations/{operation_id}`."
    )


class DependencyList(BaseModel):
    data: list[DependencyPublic]
    next_cursor: str | None = None


