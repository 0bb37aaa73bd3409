"""Excluded sources: the table every write citing a source is checked against."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Column, ForeignKey, LargeBinary, String, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class SourceExclusion(SQLModel, table=True):
    """A source whose every later write is refused, checked by its keyed digest.

    The source is kept only sealed (`sealed_source`; `source` stays empty since migration
    0030). An erasure of a subject citing it empties the sealed copy and keeps
    `source_digest` (`app/tenants/digests.py`): a re-import of the same source is still
    refused, and the name is gone.
    """

    __tablename__ = "source_exclusion"
    __table_args__ = (UniqueConstraint("tenant_id", "source_digest",
                                       name="uq_source_exclusion_tenant_id_source_digest"),)

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    source: str | None = Field(default=None, sa_column=Column(String(255)))
    source_digest: str = Field(sa_column=Column(String(64), nullable=False))
    # The source string sealed under the tenant's sealing key (app/memories/sealing.py),
    # `source` staying empty; an erasure of a subject citing it empties this too.
    sealed_source: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    reason: str | None = Field(default=None, sa_column=Column(String(500)))
    created_at: datetime = timestamp_field()
