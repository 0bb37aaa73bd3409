"""Artifacts as the API accepts and shows them."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.artifacts.models import ArtifactStatus
from app.core.schemas import BodyUUID, NonBlank, StrictModel


class ArtifactCreate(StrictModel):
    kind: NonBlank = Field(
        min_length=1, max_length=100,
        description="What the product made, e.g. `summary`, `graph_edge`, `training_sample`.",
    )
    ref: NonBlank = Field(
        min_length=1, max_length=500,
        description="The product's own reference to it (a row ID, a URL): sent back in "
        "`artifact.erase_requested` events. Never put memory text here.",
    )
    derived_from: list[BodyUUID] = Field(
        min_length=1, max_length=1000,
        description="The memories it was derived from (unforgotten memories of this tenant).",
    )


class ArtifactPublic(BaseModel):
    id: uuid.UUID
    kind: str
    ref: str
    derived_from: list[uuid.UUID]
    status: ArtifactStatus
    created_at: datetime
    erase_requested_at: datetime | None
    acknowledged_at: datetime | None


class ArtifactList(BaseModel):
    data: list[ArtifactPublic]
    next_cursor: str | None = None
