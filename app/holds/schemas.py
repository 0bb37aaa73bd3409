"""Legal holds as the API accepts and answers them."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.core.schemas import BodyUUID, NonBlank, StrictModel

MAX_MEMORY_IDS = 1000


class _HoldCreate(StrictModel):
    reason: NonBlank = Field(min_length=1, max_length=500,
                             description="Why the hold is placed (audited).")
    case_ref: NonBlank | None = Field(None, min_length=1, max_length=200,
                                      description="The case or matter it serves.")


class SubjectHoldCreate(_HoldCreate):
    subject: NonBlank = Field(min_length=1, max_length=255,
                              description="Every memory of the subject, later ones included.")


class MemoryIdsHoldCreate(_HoldCreate):
    memory_ids: list[BodyUUID] = Field(
        min_length=1, max_length=MAX_MEMORY_IDS,
        description="These memories of the tenant (unknown or forgotten ones: 422).")


class SourceHoldCreate(_HoldCreate):
    source: NonBlank = Field(min_length=1, max_length=255,
                             description="Every memory whose provenance names the source.")


# Exactly one scope: each variant requires its field and forbids the others'.
HoldCreate = SubjectHoldCreate | MemoryIdsHoldCreate | SourceHoldCreate


class SubjectScope(BaseModel):
    subject: str


class MemoryIdsScope(BaseModel):
    memory_ids: list[uuid.UUID]


class SourceScope(BaseModel):
    source: str


class LegalHoldPublic(BaseModel):
    id: uuid.UUID
    scope: SubjectScope | MemoryIdsScope | SourceScope
    reason: str
    case_ref: str | None
    created_at: datetime
    created_by: str = Field(description="The actor who placed it.")
    released_at: datetime | None = Field(description="Null while the hold is active.")
    released_by: str | None = None


class LegalHoldDetail(LegalHoldPublic):
    held_count: int = Field(description="How many memories (not forgotten) it covers now.")


class LegalHoldList(BaseModel):
    data: list[LegalHoldPublic]
    next_cursor: str | None = None
