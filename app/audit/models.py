"""The audit event: one link of a tenant's append-only hash chain.

An audit row NEVER holds memory content — no memory text, no retraction phrase, nothing a
data subject said. It names who did what to which target, the state move, a short reason and
content-free `details` (counts, flags, IDs). Rows survive forgets and erasures, so anything
else would defeat invariant 5. `app.audit.content` enforces this for every append.

The database keeps the table append-only: a trigger refuses UPDATE and DELETE (see migration
0003_audit), and each row's `hash` covers its fields and its predecessor's hash, so an edit,
a removed row or a reordering made by going around the trigger shows up in `verify`.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    CHAR,
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    String,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field

HASH_LENGTH = 64


class AuditEvent(SQLModel, table=True):
    __tablename__ = "audit_event"
    __table_args__ = (
        UniqueConstraint("tenant_id", "seq"),
        CheckConstraint("seq >= 1", name="seq"),
        Index("ix_audit_event_tenant_id_target_id_seq", "tenant_id", "target_id", "seq"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    # 1, 2, 3 … per tenant, without gaps: `verify` treats a gap as a removed row.
    seq: int = Field(sa_column=Column(BigInteger, nullable=False))
    # "key:<api key id>", "system:<job>" or "admin".
    actor: str = Field(sa_column=Column(String(100), nullable=False))
    action: str = Field(sa_column=Column(String(64), nullable=False))
    target_kind: str = Field(sa_column=Column(String(32), nullable=False))
    target_id: str | None = Field(default=None, sa_column=Column(String(255)))
    from_state: str | None = Field(default=None, sa_column=Column(String(20)))
    to_state: str | None = Field(default=None, sa_column=Column(String(20)))
    reason: str | None = Field(default=None, sa_column=Column(String(500)))
    details: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}")
    )
    created_at: datetime = timestamp_field()
    prev_hash: str = Field(sa_column=Column(CHAR(HASH_LENGTH), nullable=False))
    hash: str = Field(sa_column=Column(CHAR(HASH_LENGTH), nullable=False))
