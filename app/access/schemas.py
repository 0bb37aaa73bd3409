"""What `POST /v1/access-requests` accepts and the export it produces."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.audit.schemas import AuditEventPublic
from app.core.schemas import NonBlank, StrictModel
from app.memories.models import MemoryState, Volatility
from app.sources.schemas import ExclusionPublic

FORMAT: Literal["lethe.access-export.v1"] = "lethe.access-export.v1"


class AccessRequestCreate(StrictModel):
    subject: NonBlank = Field(min_length=1, max_length=255,
                              description="Whose data to export.")


class ExportVersion(BaseModel):
    id: uuid.UUID
    seq: int
    text: str
    created_at: datetime
    current: bool


class ExportEdge(BaseModel):
    kind: Literal["source", "memory"]
    ref: str = Field(description="The source, or the ID of a memory of this subject.")
    created_at: datetime


class ExportProvenance(BaseModel):
    parents: list[ExportEdge] = Field(
        description="Sources, and memories of this subject, that it was derived from.")
    children: list[ExportEdge] = Field(
        description="Memories of this subject derived from it.")
    parents_elsewhere: int = Field(
        description="Memories of other subjects it was derived from (counted, not shown).")
    children_elsewhere: int = Field(
        description="Memories of other subjects derived from it (counted, not shown).")


class ExportMemory(BaseModel):
    """A memory that still holds content (any state but forgotten), with every version."""

    id: uuid.UUID
    state: MemoryState
    volatility: Volatility
    key: str | None
    source: str | None
    depends_on: dict[str, Any]
    metadata: dict[str, Any]
    flags: list[str]
    revision: int
    superseded_by: uuid.UUID | None
    current_version_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime
    last_validated_at: datetime
    state_changed_at: datetime
    versions: list[ExportVersion]
    provenance: ExportProvenance


class ExportTombstone(BaseModel):
    """A forgotten memory: what remains of it is its ID and dates, never its content."""

    id: uuid.UUID
    state: Literal["forgotten"] = "forgotten"
    created_at: datetime
    forgotten_at: datetime


class ExportRetraction(BaseModel):
    id: uuid.UUID
    about: str | None
    memory_ids: list[str]
    memory_count: int
    created_at: datetime


class ExportCounts(BaseModel):
    memories: int
    forgotten: int
    versions: int
    retractions: int
    source_exclusions: int
    audit_events: int


class AccessExportDocument(BaseModel):
    """Everything Lethe holds about one subject (`GET /v1/access-requests/{id}/export`)."""

    format: Literal["lethe.access-export.v1"] = FORMAT
    request_id: uuid.UUID
    tenant_id: uuid.UUID
    subject: str
    generated_at: datetime
    counts: ExportCounts
    memories: list[ExportMemory]
    forgotten: list[ExportTombstone]
    retractions: list[ExportRetraction]
    source_exclusions: list[ExclusionPublic] = Field(
        description="Exclusions of the sources the subject's memories cite.")
    audit_events: list[AuditEventPublic] = Field(
        description="The audit trail of the subject's memories (content-free).")
