"""Operation: the idempotency record of a mutation, and the status of an accepted job."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Column,
    Computed,
    Enum,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class OperationStatus(enum.StrEnum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"


class Operation(SQLModel, table=True):
    __tablename__ = "operation"
    __table_args__ = (
        UniqueConstraint("tenant_id", "idempotency_key"),
        Index("ix_operation_response_id", "response_id",
              postgresql_where=text("response_id IS NOT NULL")),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    api_key_id: uuid.UUID | None = Field(
        default=None, sa_column=Column(ForeignKey("api_key.id", ondelete="SET NULL"))
    )
    idempotency_key: str | None = Field(default=None, sa_column=Column(String(255)))
    kind: str = Field(sa_column=Column(String(64), nullable=False))
    request_method: str = Field(sa_column=Column(String(10), nullable=False))
    request_path: str = Field(sa_column=Column(String(2048), nullable=False))
    request_digest: str = Field(sa_column=Column(String(64), nullable=False))
    status: OperationStatus = Field(
        sa_column=Column(
            Enum(OperationStatus, name="operation_status", native_enum=False, length=20),
            nullable=False,
        )
    )
    response_status: int | None = Field(default=None, sa_column=Column(Integer))
    response_body: Any | None = Field(default=None, sa_column=Column(JSONB))
    response_headers: dict[str, str] | None = Field(default=None, sa_column=Column(JSONB))
    # The ID the stored answer names, so a forget finds the answers to redact by index. A
    # plain column, not an expression index: under row-level security the planner will not
    # use an index on `response_body ->> 'id'` (the operator is not leakproof).
    response_id: str | None = Field(
        default=None,
        sa_column=Column(Text, Computed("response_body ->> 'id'", persisted=True)),
    )
    # Items of an accepted job until its task applies them (then cleared, same transaction).
    request_payload: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB))
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB))
    error: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB))
    created_at: datetime = timestamp_field()
    updated_at: datetime = timestamp_field()
    expires_at: datetime = timestamp_field(server_default=False, index=True)


class OperationMemory(SQLModel, table=True):
    """A memory a stored answer names beyond its `response_id` (each item of a batch), so a
    forget finds the answer to redact through an index (migration 0024)."""

    __tablename__ = "operation_memory"
    __table_args__ = (Index("ix_operation_memory_memory_id", "memory_id"),)

    operation_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("operation.id", ondelete="CASCADE"), primary_key=True)
    )
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    memory_id: uuid.UUID = Field(primary_key=True)
