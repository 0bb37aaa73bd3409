from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.core.schemas import NonBlank, StrictModel


class ExclusionCreate(StrictModel):
    source: NonBlank = Field(min_length=1, max_length=255)
    reason: NonBlank | None = Field(None, min_length=1, max_length=500)


class ExclusionPublic(BaseModel):
    id: uuid.UUID
    source: str | None = Field(
        description="The excluded source; null once an erasure replaced it by its digest.")
    source_digest: str = Field(
        description="The tenant's keyed digest of the source: what exclusions are checked by.")
    reason: str | None
    created_at: datetime


class ExclusionList(BaseModel):
    data: list[ExclusionPublic]
    next_cursor: str | None = None
