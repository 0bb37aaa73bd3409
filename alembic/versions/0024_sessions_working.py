"""Agents' working memory: a `working` volatility, a memory's `session`, the tenant's
`working` settings, and which memories a stored batch answer names.

Revision ID: 0024_sessions_working
Revises: 0023_console_sign_in
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0024_sessions_working"
down_revision: str | None = "0023_console_sign_in"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DURABLE = "'structural', 'preferential', 'procedural', 'situational'"


def upgrade() -> None:
    op.add_column("memory", sa.Column("session", sa.String(255), nullable=True))
    # Closing a session finds its memories by (tenant, session); most memories have none.
    op.create_index("ix_memory_tenant_id_session", "memory", ["tenant_id", "session"],
                    postgresql_where=sa.text("session IS NOT NULL"))
    op.drop_constraint("ck_memory_volatility", "memory", type_="check")
    op.create_check_constraint("ck_memory_volatility", "memory",
                               f"volatility IN ({DURABLE}, 'working')")
    # An empty object reads as the defaults (app/tenant_settings/schemas.py, `Working`); the
    # working half-life joins `half_lives`, whose missing keys read as their defaults too.
    op.add_column("tenant_settings", sa.Column(
        "working", postgresql.JSONB(), server_default="{}", nullable=False))
    # A stored answer naming many memories (a batch) has no single `response_id`: these rows
    # let a forget find it by an index under row-level security.
    op.create_table(
        "operation_memory",
        sa.Column("operation_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("memory_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(["operation_id"], ["operation.id"],
                                name="fk_operation_memory_operation_id_operation",
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_operation_memory_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("operation_id", "memory_id", name="pk_operation_memory"),
    )
    op.create_index("ix_operation_memory_memory_id", "operation_memory", ["memory_id"])
    rls.protect("operation_memory")


def downgrade() -> None:
    rls.unprotect("operation_memory")
    op.drop_table("operation_memory")
    op.drop_column("tenant_settings", "working")
    # Scratch memories outlive the class that made them scratch as the shortest durable one.
    op.execute("UPDATE memory SET volatility = 'situational' WHERE volatility = 'working'")
    op.drop_constraint("ck_memory_volatility", "memory", type_="check")
    op.create_check_constraint("ck_memory_volatility", "memory", f"volatility IN ({DURABLE})")
    op.drop_index("ix_memory_tenant_id_session", table_name="memory")
    op.drop_column("memory", "session")
