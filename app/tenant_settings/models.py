"""Per-tenant behaviour settings (half-lives, retention, detection switches)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Column, ForeignKey
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class TenantSettings(SQLModel, table=True):
    __tablename__ = "tenant_settings"

    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), primary_key=True)
    )
    half_lives: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    retention: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    supersession: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    forget: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}"))
    retractions: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}"))
    # Migration 0022_limits: an empty object reads as the default limits.
    limits: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}"))
    erasure: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}"))
    console: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}"))
    # Migration 0024: an empty object reads as the default working-memory settings.
    working: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}"))
    detect_forget_requests: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default="false")
    )
    updated_at: datetime = timestamp_field()
