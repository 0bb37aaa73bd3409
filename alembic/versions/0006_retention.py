"""Retention: `memory.state_changed_at` (backfilled, indexed); operation answers found by ID.

Revision ID: 0006_retention
Revises: 0005_dependencies
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_retention"
down_revision: str | None = "0005_dependencies"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")
STATE_AGE = "ix_memory_tenant_id_state_state_changed_at"
RESPONSE_ID = "ix_operation_response_id"


def upgrade() -> None:
    op.add_column("memory", sa.Column("state_changed_at", sa.DateTime(timezone=True),
                                      nullable=True))
    # The best estimate of when an existing memory entered its state is its last change.
    # FORCE row-level security filters the owner too (no tenant set → no rows), so the
    # backfill lifts it for this one statement; DDL is transactional, so a failure restores it.
    op.execute("ALTER TABLE memory NO FORCE ROW LEVEL SECURITY")
    op.execute("UPDATE memory SET state_changed_at = updated_at")
    op.execute("ALTER TABLE memory FORCE ROW LEVEL SECURITY")
    op.alter_column("memory", "state_changed_at", nullable=False, server_default=NOW)
    op.create_index(STATE_AGE, "memory", ["tenant_id", "state", "state_changed_at"])
    # Every forget redacts the stored answers naming the memory; without an index each one
    # scans the table (15-30 ms at 100,000 records: hours for a retention run of that size).
    # A stored column, because row-level security keeps the planner off an expression index
    # on `response_body ->> 'id'` (the operator is not leakproof).
    op.add_column("operation", sa.Column(
        "response_id", sa.Text(), sa.Computed("response_body ->> 'id'", persisted=True),
        nullable=True))
    op.create_index(RESPONSE_ID, "operation", ["response_id"],
                    postgresql_where=sa.text("response_id IS NOT NULL"))


def downgrade() -> None:
    op.drop_index(RESPONSE_ID, table_name="operation")
    op.drop_column("operation", "response_id")
    op.drop_index(STATE_AGE, table_name="memory")
    op.drop_column("memory", "state_changed_at")
