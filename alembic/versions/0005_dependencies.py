"""Dependencies: the current value of each named dependency per tenant.

Revision ID: 0005_dependencies
Revises: 0004_forgetting
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.core import rls

revision: str = "0005_dependencies"
down_revision: str | None = "0004_forgetting"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dependency",
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("value", sa.String(255), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_dependency_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tenant_id", "key", name="pk_dependency"),
    )
    rls.protect("dependency")


def downgrade() -> None:
    rls.unprotect("dependency")
    op.drop_table("dependency")
