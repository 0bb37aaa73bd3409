"""What remains visible of forgetting: excluded sources and retraction records."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class Retraction(SQLModel, table=True):
    """When and which memories were forgotten, and the caller's own `about` phrase if any.

    Never the forgotten text: the phrase is what the caller chose to say about it.
    """

    __tablename__ = "retraction"
    __table_args__ = (
        Index("ix_retraction_tenant_id_subject_created_at", "tenant_id", "subject",
              "created_at"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    # The subject's keyed digest (app/keys/digests.py), as memories store it.
    subject: str = Field(sa_column=Column(String(255), nullable=False))
    # The phrase sealed under the subject's data key (`retractions.about_of`); None: none.
    sealed_about: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    memory_ids: list[str] = Field(
        default_factory=list, sa_column=Column(JSONB, nullable=False, server_default="[]")
    )
    memory_count: int = Field(sa_column=Column(Integer, nullable=False))
    created_at: datetime = timestamp_field()


class ForgetFence(SQLModel, table=True):
    """A tenant's forget fence: raised by a trigger on `memory` in every transaction that
    takes a memory, or some of its text, out of what recall and the API show (migration
    0028). A replica serves the tenant's reads only once it shows the primary's
    (app/core/replicas.py). Read-only for the application."""

    __tablename__ = "forget_fence"

    tenant_id: uuid.UUID = Field(primary_key=True)
    generation: int = Field(sa_column=Column(BigInteger, nullable=False))
    # The transaction that raised it last: raised once per transaction.
    xact: int = Field(sa_column=Column(BigInteger, nullable=False))
