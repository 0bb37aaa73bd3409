"""A memory's explicit expiry: `expires_at`, and the index the expiry job finds them by.

Revision ID: 0029_expiry
Revises: 0028_forget_fence
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029_expiry"
down_revision: str | None = "0028_forget_fence"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memory", sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_memory_tenant_id_expires_at", "memory", ["tenant_id", "expires_at"],
        postgresql_where=sa.text("expires_at IS NOT NULL AND state IN ('active', 'suspect')"))
    # An expiry set or moved earlier removes a memory from recall from that instant, with no
    # other change: a replica that has not replayed it would still recall the memory once the
    # instant passes, so it raises the forget fence (migration 0028) like any removal.
    op.execute("""
        CREATE TRIGGER memory_forget_fence_expiry AFTER UPDATE OF expires_at ON memory
        FOR EACH ROW WHEN (OLD.state <> 'forgotten' AND NEW.expires_at IS NOT NULL
                           AND (OLD.expires_at IS NULL OR NEW.expires_at < OLD.expires_at))
        EXECUTE FUNCTION lethe_raise_forget_fence()""")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS memory_forget_fence_expiry ON memory")
    op.drop_index("ix_memory_tenant_id_expires_at", table_name="memory")
    op.drop_column("memory", "expires_at")
