"""The export an access request produced, kept apart from its operation record."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Column, ForeignKey, Index, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class AccessExport(SQLModel, table=True):
    """One finished export: the subject's data as of `created_at`.

    It is subject data in full (texts included), so it lives here, not in the operation's
    stored answer or result: an erasure of the subject deletes it by `subject` (the subject's
    keyed digest, `app/keys/digests.py`), and it goes
    with its operation record when that is pruned (or at `expires_at`, whichever is first).
    """

    __tablename__ = "access_export"
    __table_args__ = (Index("ix_access_export_tenant_id_subject", "tenant_id", "subject"),)

    operation_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("operation.id", ondelete="CASCADE"), primary_key=True)
    )
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    subject: str = Field(sa_column=Column(String(255), nullable=False))
    body: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    created_at: datetime = timestamp_field()
    expires_at: datetime = timestamp_field(server_default=False)
