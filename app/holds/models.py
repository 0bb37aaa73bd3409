"""Legal holds: what compliance keeps from being destroyed, and the memories a hold names."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, LargeBinary, String
from sqlalchemy import text as sa_text
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class HoldScope(enum.StrEnum):
    subject = "subject"  # every memory of the subject, later ones included
    memory_ids = "memory_ids"  # the memories listed in `legal_hold_memory`
    source = "source"  # every memory whose provenance (or `source`) names the source


class LegalHold(SQLModel, table=True):
    """A hold: placed by compliance, released (never deleted) with `released_at`."""

    __tablename__ = "legal_hold"
    __table_args__ = (
        CheckConstraint("scope IN ('subject', 'memory_ids', 'source')", name="scope"),
        # The column of the scope is set, and only it (a memory_ids hold sets neither).
        CheckConstraint("(scope = 'subject') = (subject IS NOT NULL) "
                        "AND (scope = 'source') = (source IS NOT NULL)", name="scope_fields"),
        Index("ix_legal_hold_tenant_id_created_at_id", "tenant_id", "created_at", "id"),
        # Every destroying path asks which active holds cover its memories: released holds
        # stay forever, so the active ones are indexed apart.
        Index("ix_legal_hold_active", "tenant_id", postgresql_where=sa_text("released_at IS NULL")),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    scope: str = Field(sa_column=Column(String(20), nullable=False))
    subject: str | None = Field(default=None, sa_column=Column(String(255)))
    source: str | None = Field(default=None, sa_column=Column(String(255)))
    # `subject` and `source` are keyed digests (app/keys/digests.py); these are the strings,
    # sealed (the subject under its data key, the source under the tenant's sealing key).
    sealed_subject: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    sealed_source: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    reason: str = Field(sa_column=Column(String(500), nullable=False))
    case_ref: str | None = Field(default=None, sa_column=Column(String(200)))
    created_at: datetime = timestamp_field()
    created_by: str = Field(sa_column=Column(String(100), nullable=False))
    released_at: datetime | None = timestamp_field(nullable=True)
    released_by: str | None = Field(default=None, sa_column=Column(String(100)))


class LegalHoldMemory(SQLModel, table=True):
    """One memory a `memory_ids` hold names."""

    __tablename__ = "legal_hold_memory"
    __table_args__ = (
        # A destroying path looks its memories up here.
        Index("ix_legal_hold_memory_memory_id", "memory_id"),
    )

    hold_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("legal_hold.id", ondelete="CASCADE"), primary_key=True)
    )
    memory_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("memory.id", ondelete="CASCADE"), primary_key=True)
    )
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
