from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel

from app.core.schemas import PublicModel
from app.idempotency.models import Operation, OperationStatus

LOCATION = {"Location": {"description": "The operation to poll: `/v1/operations/{id}`.",
                         "schema": {"type": "string"}}}


class OperationPublic(PublicModel):
    id: uuid.UUID
    kind: str
    status: OperationStatus
    result: dict[str, Any] | None
    error: dict[str, Any] | None


class OperationAccepted(BaseModel):
    """The answer of every 202 in this API: poll the operation its `Location` names."""

    operation_id: uuid.UUID
    kind: str
    status: Literal["queued"] = "queued"

    @classmethod
    def of(cls, operation: Operation) -> OperationAccepted:
        return cls(operation_id=operation.id, kind=operation.kind)

    @property
    def location(self) -> str:
        return location(self.operation_id)


def location(operation_id: uuid.UUID) -> str:
    return f"/v1/operations/{operation_id}"
