"""Shared model plumbing: naming convention, time columns, the table registry."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, DateTime, func
from sqlmodel import Field, SQLModel

# Predictable constraint names keep Alembic migrations reviewable and reversible.
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def timestamp_field(*, nullable: bool = False, server_default: bool = True, **kw: Any) -> Any:
    """A timezone-aware ``*_at`` column (stored as timestamptz)."""
    return Field(
        default_factory=utcnow if not nullable else None,
        sa_column=Column(
            DateTime(timezone=True),
            nullable=nullable,
            server_default=func.now() if server_default and not nullable else None,
            **kw,
        ),
    )
