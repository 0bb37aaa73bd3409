"""A staff member: a named person of a tenant who signs in to the console."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import Column, Enum, ForeignKey, Index, Integer, String, text
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field


class StaffRole(enum.StrEnum):
    officer = "officer"
    viewer = "viewer"


class Staff(SQLModel, table=True):
    __tablename__ = "staff"
    __table_args__ = (
        # One active account per email and tenant; a removed one frees its email.
        Index("uq_staff_tenant_id_email", "tenant_id", "email", unique=True,
              postgresql_where=text("removed_at IS NULL")),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    # Lower-cased on the way in, so the unique index compares emails as people do.
    email: str = Field(sa_column=Column(String(254), nullable=False))
    role: StaffRole = Field(
        sa_column=Column(Enum(StaffRole, name="staff_role", native_enum=False, length=20),
                         nullable=False)
    )
    # Argon2id in PHC string form ($argon2id$v=19$m=…,t=…,p=…$salt$hash): never the password.
    password_hash: str = Field(sa_column=Column(String(255), nullable=False))
    created_at: datetime = timestamp_field()
    # A removed member keeps the row, so the audit trail's `staff:<id>` still names a person;
    # the row can no longer sign in.
    removed_at: datetime | None = timestamp_field(nullable=True)
    # Every console cookie names the generation it was issued under; signing out, removal and
    # a role change add one, which ends all of this member's sessions on the server.
    session_generation: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0"))


class SignInThrottle(SQLModel, table=True):
    """Failed console sign-ins per email, across tenants.

    Keyed by a keyed digest of the email, so the row says nothing about who tried, and kept
    for unknown emails too: a lockout must not tell a guesser which emails have accounts.
    Belongs to no tenant (an email may have accounts in several), so it has no row-level
    security; only app/staff/sign_in.py touches it.
    """

    __tablename__ = "staff_sign_in_throttle"

    email_digest: str = Field(sa_column=Column(String(64), primary_key=True))
    failures: int = Field(sa_column=Column(Integer, nullable=False))
    last_failure_at: datetime = timestamp_field()
    locked_until: datetime | None = timestamp_field(nullable=True)
