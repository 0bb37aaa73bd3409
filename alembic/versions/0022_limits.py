"""Tenant settings: `limits` (per-key request rate, quotas on memories and ingest payloads).

Revision ID: 0022_limits
Revises: 0021_bm25_observed_at
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0022_limits"
down_revision: str | None = "0021_bm25_observed_at"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # An empty object reads as the default limits (app/tenant_settings/schemas.py, `Limits`).
    op.add_column("tenant_settings", sa.Column(
        "limits", postgresql.JSONB(), server_default="{}", nullable=False))


def downgrade() -> None:
    op.drop_column("tenant_settings", "limits")
