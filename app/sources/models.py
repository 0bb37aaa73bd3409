"""Excluded sources: the table every write citing a source is checked against."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Column, ForeignKey, String, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class SourceExclusion(SQLModel, table=True):
    """A source whose every later write is refused."""

    __tablename__ = "source_exclusion"
    __table_args__ = (UniqueConstraint("tenant_id", "source"),)

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    source: str = Field(sa_column=Column(String(255), nullable=False))
    reason: str | None = Field(default=None, sa_column=Column(String(500)))
    created_at: datetime = timestamp_field()
