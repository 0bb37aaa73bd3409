"""Forgetting and sources as the API accepts and answers them."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, Field

from app.core.schemas import JsonInt, NonBlank, StrictModel


class ForgetBody(StrictModel):
    delete: bool = Field(True, description="Tombstone the memory and purge its content.")
    exclude_source: bool = Field(True, description="Refuse every later write citing its source.")
    about: NonBlank | None = Field(
        None, min_length=1, max_length=200,
        description="Your short phrase for what was forgotten; shown in recall's retractions.",
    )
    reason: NonBlank | None = Field(
        None, min_length=1, max_length=500,
        description="Why (audited). Name a ticket or policy, never the forgotten content.",
    )


class ForgetResult(BaseModel):
    id: uuid.UUID
    forgotten: bool
    excluded_source: str | None
    retraction_id: uuid.UUID | None
    already_forgotten: bool = False


class DescribeBody(StrictModel):
    subject: NonBlank = Field(min_length=1, max_length=255, description="Whose memories.")
    about: NonBlank = Field(
        min_length=1, max_length=200,
        description="What to forget, as the user said it (\"that I collect sneakers\"); "
        "kept in the retraction record.",
    )
    delete: bool = Field(True, description="Forget for good; false quarantines (reversible).")
    exclude_source: bool = Field(False, description="Also exclude the affected sources.")
    dry_run: bool = Field(False, description="Change nothing; say what would happen.")
    max_targets: JsonInt = Field(5, ge=1, le=50, description="At most this many memories.")


class StruckPublic(BaseModel):
    id: uuid.UUID
    sentences: int = Field(description="How many sentences were removed.")


class SkippedPublic(BaseModel):
    id: uuid.UUID
    why: str


class DescribeResult(BaseModel):
    retraction_id: uuid.UUID | None = Field(description="Null only for a dry run.")
    forgotten: list[uuid.UUID]
    quarantined: list[uuid.UUID]
    struck: list[StruckPublic]
    unresolved: bool = Field(description="Nothing was found to forget.")
    skipped: list[SkippedPublic] = Field(
        default_factory=list,
        description="Memories resolved but not handled (e.g. changed meanwhile); retry.",
    )
    held: list[uuid.UUID] = Field(
        default_factory=list,
        description="Memories resolved but kept by a legal hold: not forgotten, not struck.",
    )


class HeldMemory(BaseModel):
    memory_id: uuid.UUID
    hold_id: uuid.UUID


class SessionClosed(BaseModel):
    session: str
    evicted: list[uuid.UUID] = Field(description="Working memories forgotten (sources kept).")
    kept: list[uuid.UUID] = Field(
        description="The session's other memories: promoted, durable, or held.")
    held: list[HeldMemory] = Field(
        description="Working memories a legal hold kept (also listed in `kept`).")
