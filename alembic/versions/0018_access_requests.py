"""Access requests: the export each one produced, kept apart from its operation record.

Revision ID: 0018_access_requests
Revises: 0017_artifacts_webhooks
Create Date: 2026-12-08
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0018_access_requests"
down_revision: str | None = "0017_artifacts_webhooks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "access_export",
        sa.Column("operation_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("body", postgresql.JSONB(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        # The export goes with its operation record when that is pruned.
        sa.ForeignKeyConstraint(["operation_id"], ["operation.id"],
                                name="fk_access_export_operation_id_operation",
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_access_export_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("operation_id", name="pk_access_export"),
    )
    # An erasure deletes the subject's exports by subject.
    op.create_index("ix_access_export_tenant_id_subject", "access_export",
                    ["tenant_id", "subject"])
    rls.protect("access_export")


def downgrade() -> None:
    rls.unprotect("access_export")
    op.drop_table("access_export")
