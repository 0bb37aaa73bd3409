"""Tenants (isolation boundary) and their API keys."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import Column, Enum, ForeignKey, String
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class Role(enum.StrEnum):
    app = "app"
    compliance = "compliance"


class Tenant(SQLModel, table=True):
    __tablename__ = "tenant"

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    name: str = Field(sa_column=Column(String(200), nullable=False))
    created_at: datetime = timestamp_field()
    # The key of the tenant's keyed digests is not here: it lives in the key store
    # (`app/keys/tenant_keys.py`), so no dump of this table can check guessed subjects.


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_key"

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False, index=True)
    )
    role: Role = Field(
        sa_column=Column(Enum(Role, name="api_key_role", native_enum=False, length=20),
                         nullable=False)
    )
    # SHA-256 of a 256-bit random key: a fast hash is enough when the secret has full entropy.
    key_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    prefix: str = Field(sa_column=Column(String(16), nullable=False))
    created_at: datetime = timestamp_field()
    # Set by `lethe_api_key` when the key authenticates, at most once a minute (0015).
    last_used_at: datetime | None = timestamp_field(nullable=True)
    # A deleted key keeps its row for the audit trail; the lookup ignores it from then on.
    revoked_at: datetime | None = timestamp_field(nullable=True)
