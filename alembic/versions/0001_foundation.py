"""Foundation: tenants, API keys, tenant settings, operations; row-level security.

Revision ID: 0001_foundation
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0001_foundation"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.execute(rls.CURRENT_TENANT_FN)

    op.create_table(
        "tenant",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_tenant"),
    )
    # A tenant sees its own row; beat jobs may list tenant IDs in the maintenance scope.
    rls.protect(
        "tenant",
        column="id",
        extra_using="current_setting('lethe.scope', true) = 'maintenance'",
    )

    op.create_table(
        "api_key",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("role IN ('app', 'compliance')", name="role"),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenant.id"], name="fk_api_key_tenant_id_tenant", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_api_key"),
        sa.UniqueConstraint("key_hash", name="uq_api_key_key_hash"),
    )
    op.create_index("ix_api_key_tenant_id", "api_key", ["tenant_id"])
    # Authentication happens before the tenant is known: a transaction that names the hash of
    # the presented key may read exactly that key's row, nothing else.
    rls.protect(
        "api_key",
        extra_using="key_hash = current_setting('lethe.auth_key_hash', true)",
    )

    op.create_table(
        "tenant_settings",
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("half_lives", postgresql.JSONB(), nullable=False),
        sa.Column("retention", postgresql.JSONB(), nullable=False),
        sa.Column("supersession", postgresql.JSONB(), nullable=False),
        sa.Column("detect_forget_requests", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenant.id"], name="fk_tenant_settings_tenant_id_tenant",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tenant_id", name="pk_tenant_settings"),
    )
    rls.protect("tenant_settings")

    op.create_table(
        "operation",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("api_key_id", sa.Uuid(), nullable=True),
        sa.Column("idempotency_key", sa.String(255), nullable=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("request_method", sa.String(10), nullable=False),
        sa.Column("request_path", sa.String(2048), nullable=False),
        sa.Column("request_digest", sa.String(64), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_body", postgresql.JSONB(), nullable=True),
        sa.Column("response_headers", postgresql.JSONB(), nullable=True),
        sa.Column("result", postgresql.JSONB(), nullable=True),
        sa.Column("error", postgresql.JSONB(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed')", name="status"
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenant.id"], name="fk_operation_tenant_id_tenant", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_key.id"], name="fk_operation_api_key_id_api_key",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_operation"),
        sa.UniqueConstraint("tenant_id", "idempotency_key",
                            name="uq_operation_tenant_id_idempotency_key"),
    )
    op.create_index("ix_operation_expires_at", "operation", ["expires_at"])
    rls.protect("operation")


def downgrade() -> None:
    for table in ("operation", "tenant_settings", "api_key", "tenant"):
        rls.unprotect(table)
        op.drop_table(table)
    op.execute("DROP FUNCTION IF EXISTS lethe_current_tenant()")
