"""The current value of each named dependency (`product.version` → `4.2`) per tenant."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Column, ForeignKey, String
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class Dependency(SQLModel, table=True):
    __tablename__ = "dependency"

    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), primary_key=True)
    )
    key: str = Field(sa_column=Column(String(255), primary_key=True))
    value: str = Field(sa_column=Column(String(255), nullable=False))
    updated_at: datetime = timestamp_field()
