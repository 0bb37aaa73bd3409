"""Audit: audit_event, an append-only per-tenant hash chain; row-level security.

Revision ID: 0003_audit
Revises: 0002_memories
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0003_audit"
down_revision: str | None = "0002_memories"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")

# The application role is granted UPDATE and DELETE on every table after each migration
# (app/core/migrations.py, grant_app_role), so revoking privileges here would not last: the
# trigger is what keeps the table append-only for every role, the owner included.
# `lethe.audit_maintenance = 'on'` is reserved for a future retention job (pruning events past
# retention); nothing sets it today. Any role can set a custom setting, so it guards against
# mistakes, not against a compromised role: the hash chain and the exported head detect that.
IMMUTABLE_FN = """
CREATE OR REPLACE FUNCTION lethe_audit_immutable() RETURNS trigger
LANGUAGE plpgsql AS
$$
BEGIN
    IF current_setting('lethe.audit_maintenance', true) = 'on' THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_event is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
"""


def upgrade() -> None:
    op.create_table(
        "audit_event",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target_kind", sa.String(32), nullable=False),
        sa.Column("target_id", sa.String(255), nullable=True),
        sa.Column("from_state", sa.String(20), nullable=True),
        sa.Column("to_state", sa.String(20), nullable=True),
        sa.Column("reason", sa.String(500), nullable=True),
        sa.Column("details", postgresql.JSONB(), server_default="{}", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("prev_hash", sa.CHAR(64), nullable=False),
        sa.Column("hash", sa.CHAR(64), nullable=False),
        sa.CheckConstraint("seq >= 1", name="ck_audit_event_seq"),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenant.id"], name="fk_audit_event_tenant_id_tenant",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_audit_event"),
        sa.UniqueConstraint("tenant_id", "seq", name="uq_audit_event_tenant_id_seq"),
    )
    op.create_index("ix_audit_event_tenant_id_target_id_seq", "audit_event",
                    ["tenant_id", "target_id", "seq"])
    rls.protect("audit_event")
    op.execute("REVOKE UPDATE, DELETE, TRUNCATE ON audit_event FROM PUBLIC")
    op.execute(IMMUTABLE_FN)
    op.execute(
        "CREATE TRIGGER audit_event_immutable BEFORE UPDATE OR DELETE ON audit_event "
        "FOR EACH ROW EXECUTE FUNCTION lethe_audit_immutable()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS audit_event_immutable ON audit_event")
    rls.unprotect("audit_event")
    op.drop_table("audit_event")
    op.execute("DROP FUNCTION IF EXISTS lethe_audit_immutable()")
