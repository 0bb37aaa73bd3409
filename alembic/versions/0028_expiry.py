"""A memory's explicit expiry: `expires_at`, and the index the expiry job finds them by.

Revision ID: 0028_expiry
Revises: 0027_sealed_content
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028_expiry"
down_revision: str | None = "0027_sealed_content"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memory", sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_memory_tenant_id_expires_at", "memory", ["tenant_id", "expires_at"],
        postgresql_where=sa.text("expires_at IS NOT NULL AND state IN ('active', 'suspect')"))


def downgrade() -> None:
    op.drop_index("ix_memory_tenant_id_expires_at", table_name="memory")
    op.drop_column("memory", "expires_at")
