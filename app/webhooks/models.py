"""Webhooks a tenant registered, and the log of every event delivered to them."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import CheckConstraint, Column, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class WebhookEvent(enum.StrEnum):
    memory_forgotten = "memory.forgotten"
    artifact_erase_requested = "artifact.erase_requested"
    erasure_completed = "erasure.completed"
    legal_hold_released = "legal_hold.released"


class DeliveryStatus(enum.StrEnum):
    pending = "pending"  # waiting for its first attempt or a retry
    delivered = "delivered"  # answered 2xx
    failed = "failed"  # every retry spent


class Webhook(SQLModel, table=True):
    """An endpoint and the events it wants. Its signing secret is derived from the server's
    secret key and the webhook's ID when needed (`app/webhooks/signing.py`), never stored."""

    __tablename__ = "webhook"
    __table_args__ = (Index("ix_webhook_tenant_id_created_at_id", "tenant_id", "created_at", "id"),)

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    url: str = Field(sa_column=Column(String(2000), nullable=False))
    events: list[str] = Field(sa_column=Column(JSONB, nullable=False))
    created_at: datetime = timestamp_field()


class WebhookDelivery(SQLModel, table=True):
    """One event for one webhook: the exact body every attempt sends (its ID is the
    `webhook-id` header, the same on every retry), and what the last attempt got."""

    __tablename__ = "webhook_delivery"
    __table_args__ = (
        CheckConstraint("status IN ('pending', 'delivered', 'failed')", name="status"),
        Index("ix_webhook_delivery_webhook_id_created_at", "webhook_id", "created_at"),
        # The sweep that re-sends due retries whose message was lost.
        Index("ix_webhook_delivery_tenant_id_status_next_attempt_at",
              "tenant_id", "status", "next_attempt_at"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    webhook_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("webhook.id", ondelete="CASCADE"), nullable=False)
    )
    event: str = Field(sa_column=Column(String(64), nullable=False))
    # IDs, kinds, refs and times only (never memory text): see `service.emit`.
    body: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(
        default=DeliveryStatus.pending.value, sa_column=Column(String(20), nullable=False)
    )
    attempts: int = Field(default=0, sa_column=Column(Integer, nullable=False))
    last_status_code: int | None = Field(default=None, sa_column=Column(Integer))
    last_error: str | None = Field(default=None, sa_column=Column(String(200)))
    next_attempt_at: datetime | None = timestamp_field(nullable=True)
    last_attempt_at: datetime | None = timestamp_field(nullable=True)
    delivered_at: datetime | None = timestamp_field(nullable=True)
    created_at: datetime = timestamp_field()
