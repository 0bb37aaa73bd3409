"""Legal holds: `legal_hold` (subject, memory IDs or source; released, never deleted) and
`legal_hold_memory` (the memories a memory_ids hold names); row-level security.

Revision ID: 0016_legal_holds
Revises: 0015_staff_and_keys
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.core import rls

revision: str = "0016_legal_holds"
down_revision: str | None = "0015_staff_and_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")


def _tenant_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["tenant_id"], ["tenant.id"], name=f"fk_{table}_tenant_id_tenant", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "legal_hold",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("scope", sa.String(20), nullable=False),
        sa.Column("subject", sa.String(255), nullable=True),
        sa.Column("source", sa.String(255), nullable=True),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("case_ref", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("created_by", sa.String(100), nullable=False),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("released_by", sa.String(100), nullable=True),
        sa.CheckConstraint("scope IN ('subject', 'memory_ids', 'source')",
                           name="ck_legal_hold_scope"),
        sa.CheckConstraint("(scope = 'subject') = (subject IS NOT NULL) "
                           "AND (scope = 'source') = (source IS NOT NULL)",
                           name="ck_legal_hold_scope_fields"),
        _tenant_fk("legal_hold"),
        sa.PrimaryKeyConstraint("id", name="pk_legal_hold"),
    )
    op.create_index("ix_legal_hold_tenant_id_created_at_id", "legal_hold",
                    ["tenant_id", "created_at", "id"])
    op.create_index("ix_legal_hold_active", "legal_hold", ["tenant_id"],
                    postgresql_where=sa.text("released_at IS NULL"))
    rls.protect("legal_hold")

    op.create_table(
        "legal_hold_memory",
        sa.Column("hold_id", sa.Uuid(), nullable=False),
        sa.Column("memory_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(["hold_id"], ["legal_hold.id"],
                                name="fk_legal_hold_memory_hold_id_legal_hold",
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["memory_id"], ["memory.id"],
                                name="fk_legal_hold_memory_memory_id_memory",
                                ondelete="CASCADE"),
        _tenant_fk("legal_hold_memory"),
        sa.PrimaryKeyConstraint("hold_id", "memory_id", name="pk_legal_hold_memory"),
    )
    op.create_index("ix_legal_hold_memory_memory_id", "legal_hold_memory", ["memory_id"])
    rls.protect("legal_hold_memory")


def downgrade() -> None:
    rls.unprotect("legal_hold_memory")
    op.drop_table("legal_hold_memory")
    rls.unprotect("legal_hold")
    op.drop_table("legal_hold")
