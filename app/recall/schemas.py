"""Recall as the API accepts and answers it."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field, Strict

from app.core.schemas import BodyTime, JsonInt, NonBlank, StrictModel
from app.memories.schemas import MemoryPublic


class RecallMode(enum.StrEnum):
    hybrid = "hybrid"
    vector = "vector"
    keyword = "keyword"


class RecallRequest(StrictModel):
    subject: NonBlank = Field(min_length=1, max_length=255, description="Whose memories.")
    query: NonBlank = Field(min_length=1, max_length=2000, description="What to look for.")
    limit: JsonInt = Field(10, ge=1, le=100, description="How many results at most.")
    include_suspect: bool = Field(True, description="Also return memories flagged suspect.")
    mode: Annotated[RecallMode, Strict(False)] = Field(
        RecallMode.hybrid,
        description="`hybrid` (default) fuses `vector` and `keyword`; the single modes exist "
        "for diagnosis and evaluation.",
    )
    as_of: BodyTime | None = Field(
        None, description="Answer as Lethe would have answered at that instant: the versions, "
        "states and flags then; memories written after it, and those expired by then, absent. "
        "What was forgotten never comes back, whenever it was forgotten: its retraction is "
        "listed if it was filed by then.")


class RecallResult(BaseModel):
    memory: MemoryPublic
    score: float = Field(description="Reciprocal-rank-fusion score; higher is better.")
    flags: list[str]
    history: list[MemoryPublic] = Field(
        description="Deprecated memories this one superseded, newest first."
    )


class RetractionPublic(BaseModel):
    id: uuid.UUID
    about: str | None
    created_at: datetime
    memory_count: int


class RecallResponse(BaseModel):
    results: list[RecallResult]
    retractions: list[RetractionPublic]
