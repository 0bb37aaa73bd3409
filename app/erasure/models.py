"""Erasure requests and the memories each one erases.

A request names its subject only while it is open, and then as memories store it (its keyed
digest, `app/keys/digests.py`) beside a copy sealed under the subject's key: completing it (or
cancelling it) empties both, and the subject survives as `subject_digest`, the receipt's keyed
digest (`app/tenants/digests.py`). `erasure_target` is the cascade's checkpoint: one row per memory
the plan found, marked done in the batch that erased it, so a redelivered task goes on from
the first undone row and counts nothing twice.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
)
from sqlalchemy import text as sa_text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class ErasureStatus(enum.StrEnum):
    pending_approval = "pending_approval"
    pending = "pending"
    running = "running"
    awaiting_artifacts = "awaiting_artifacts"
    on_hold = "on_hold"
    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"


OPEN = (ErasureStatus.pending_approval, ErasureStatus.pending, ErasureStatus.running,
        ErasureStatus.awaiting_artifacts, ErasureStatus.on_hold)
_OPEN_SQL = ", ".join(f"'{status.value}'" for status in OPEN)


class ErasureRequest(SQLModel, table=True):
    __tablename__ = "erasure_request"
    __table_args__ = (
        CheckConstraint("status IN (" + ", ".join(f"'{s.value}'" for s in ErasureStatus) + ")",
                        name="status"),
        # One open request per subject: a second filing answers the open one.
        Index("uq_erasure_request_open_subject", "tenant_id", "subject_digest", unique=True,
              postgresql_where=sa_text(f"status IN ({_OPEN_SQL})")),
        Index("ix_erasure_request_tenant_id_created_at_id", "tenant_id", "created_at", "id"),
        Index("ix_erasure_request_tenant_id_status", "tenant_id", "status"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    subject: str | None = Field(default=None, sa_column=Column(String(255)))
    subject_digest: str = Field(sa_column=Column(String(64), nullable=False))
    # While open, `subject` is the subject's storage digest (app/keys/digests.py, what the
    # cascade looks memories up by) and this its string sealed under its data key, for showing.
    sealed_subject: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    status: str = Field(sa_column=Column(String(20), nullable=False))
    reason: str | None = Field(default=None, sa_column=Column(String(500)))
    requested_by: str | None = Field(default=None, sa_column=Column(String(200)))
    filed_by: str = Field(sa_column=Column(String(100), nullable=False))
    due_at: datetime = timestamp_field(server_default=False)
    created_at: datetime = timestamp_field()
    approved_at: datetime | None = timestamp_field(nullable=True)
    started_at: datetime | None = timestamp_field(nullable=True)
    completed_at: datetime | None = timestamp_field(nullable=True)
    vacuumed_at: datetime | None = timestamp_field(nullable=True)
    cancelled_at: datetime | None = timestamp_field(nullable=True)
    error: str | None = Field(default=None, sa_column=Column(String(200)))
    progress_done: int = Field(default=0, sa_column=Column(Integer, nullable=False,
                                                            server_default="0"))
    progress_total: int = Field(default=0, sa_column=Column(Integer, nullable=False,
                                                             server_default="0"))
    # The subject's data key, destroyed once the cascade completed (`app/keys/`): kept here
    # because the plain subject that names the key is gone by then.
    data_key_id: str | None = Field(default=None, sa_column=Column(String(64)))
    key_destroyed_at: datetime | None = timestamp_field(nullable=True)
    # What the cascade did so far, as the receipt reports it (IDs and counts only).
    counts: dict[str, int] = Field(default_factory=dict,
                                   sa_column=Column(JSONB, nullable=False, server_default="{}"))
    # [{"memory_id", "hold_id", "held_at", "released_at"}]: every memory a hold kept, in the
    # order it was met; a released one stays listed, and is then tombstoned too.
    held: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=Column(JSONB, nullable=False, server_default="[]"))


class ErasureTarget(SQLModel, table=True):
    """One memory an erasure plans to erase; `done` once a committed batch erased it."""

    __tablename__ = "erasure_target"
    __table_args__ = (
        Index("ix_erasure_target_request_id_done_memory_id", "request_id", "done", "memory_id"),
    )

    request_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("erasure_request.id", ondelete="CASCADE"),
                         primary_key=True)
    )
    memory_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("memory.id", ondelete="CASCADE"), primary_key=True)
    )
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    derived: bool = Field(sa_column=Column(Boolean, nullable=False))  # another subject's
    # The legal hold that kept it in the last pass; cleared when the erasure resumes.
    held_by: uuid.UUID | None = Field(default=None, sa_column=Column(sa.Uuid()))
    done: bool = Field(default=False, sa_column=Column(Boolean, nullable=False,
                                                       server_default="false"))
    # Order of erasure, for the receipt's `tombstoned` list (held ones come last).
    erased_seq: int | None = Field(default=None, sa_column=Column(Integer))
