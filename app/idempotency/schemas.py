from __future__ import annotations

import uuid
from typing import Any

from app.core.schemas import PublicModel
from app.idempotency.models import OperationStatus


class OperationPublic(PublicModel):
    id: uuid.UUID
    kind: str
    status: OperationStatus
    result: dict[str, Any] | None
    error: dict[str, Any] | None
