"""Forgetting: source exclusions, retraction records, ingestion payloads on operations.

Revision ID: 0004_forgetting
Revises: 0003_audit
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0004_forgetting"
down_revision: str | None = "0003_audit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")


def upgrade() -> None:
    op.create_table(
        "source_exclusion",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("source", sa.String(255), nullable=False),
        sa.Column("reason", sa.String(500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_source_exclusion_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_source_exclusion"),
        sa.UniqueConstraint("tenant_id", "source", name="uq_source_exclusion_tenant_id_source"),
    )
    rls.protect("source_exclusion")

    op.create_table(
        "retraction",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("about", sa.String(200), nullable=True),
        sa.Column("memory_ids", postgresql.JSONB(), server_default="[]", nullable=False),
        sa.Column("memory_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_retraction_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_retraction"),
    )
    op.create_index("ix_retraction_tenant_id_subject_created_at", "retraction",
                    ["tenant_id", "subject", "created_at"])
    rls.protect("retraction")

    # An accepted ingestion keeps its items here until its task has applied them; the task
    # clears it in the same transaction, so memory text never lingers in operation records.
    op.add_column("operation", sa.Column("request_payload", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("operation", "request_payload")
    for table in ("retraction", "source_exclusion"):
        rls.unprotect(table)
        op.drop_table(table)
