"""Artifacts: things a product derived from memories outside Lethe (a summary row, a graph
edge, a fine-tuning sample, a cache entry), registered so their erasure can be asked for."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, String
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class ArtifactStatus(enum.StrEnum):
    active = "active"
    # A memory it was derived from was forgotten; the product is asked to erase it.
    erase_requested = "erase_requested"
    # The product acknowledged the erasure (a 2xx to the webhook, or `POST …/erased`).
    erased = "erased"


class Artifact(SQLModel, table=True):
    """A registered artifact; where it came from lives in `provenance_edge` (artifact ←
    memory), beside the memories' own derivations."""

    __tablename__ = "artifact"
    __table_args__ = (
        CheckConstraint("status IN ('active', 'erase_requested', 'erased')", name="status"),
        Index("ix_artifact_tenant_id_created_at_id", "tenant_id", "created_at", "id"),
        Index("ix_artifact_tenant_id_status", "tenant_id", "status"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    kind: str = Field(sa_column=Column(String(100), nullable=False))
    ref: str = Field(sa_column=Column(String(500), nullable=False))
    status: str = Field(
        default=ArtifactStatus.active.value, sa_column=Column(String(20), nullable=False)
    )
    created_at: datetime = timestamp_field()
    erase_requested_at: datetime | None = timestamp_field(nullable=True)
    acknowledged_at: datetime | None = timestamp_field(nullable=True)
    # The erasure request whose cascade asked for its erasure (it waits for the
    # acknowledgement); null when a single forget asked, or nothing did yet.
    erasure_request_id: uuid.UUID | None = Field(
        default=None, sa_column=Column(ForeignKey("erasure_request.id", ondelete="SET NULL"),
                                       index=True))
