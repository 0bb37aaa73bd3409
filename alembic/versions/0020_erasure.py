"""Erasure requests and their targets; tenants' digest keys; exclusions checked by digest;
artifacts remember the erasure that asked for them.

Revision ID: 0020_erasure
Revises: 0019_compliance_settings
Create Date: 2026-12-02
"""

import hashlib
import hmac
import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0020_erasure"
down_revision: str | None = "0019_compliance_settings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    bind = op.get_bind()
    op.add_column("tenant", sa.Column("digest_key", sa.LargeBinary(), nullable=True))
    tenants = bind.execute(sa.text("SELECT id FROM tenant")).scalars().all()
    keys = {tenant: secrets.token_bytes(32) for tenant in tenants}
    for tenant, key in keys.items():
        bind.execute(sa.text("UPDATE tenant SET digest_key = :key WHERE id = :id"),
                     {"key": key, "id": tenant})
    op.alter_column("tenant", "digest_key", nullable=False)

    op.add_column("source_exclusion", sa.Column("source_digest", sa.String(64), nullable=True))
    for tenant, key in keys.items():
        # Row-level security is forced on the table: name the tenant whose rows these are.
        bind.execute(sa.text("SELECT set_config('lethe.tenant_id', :tenant, true)"),
                     {"tenant": str(tenant)})
        rows = bind.execute(sa.text("SELECT id, source FROM source_exclusion")).all()
        for row in rows:
            bind.execute(
                sa.text("UPDATE source_exclusion SET source_digest = :digest WHERE id = :id"),
                {"id": row.id, "digest": hmac.new(key, row.source.encode(),
                                                  hashlib.sha256).hexdigest()})
    bind.execute(sa.text("SELECT set_config('lethe.tenant_id', '', true)"))
    op.alter_column("source_exclusion", "source_digest", nullable=False)
    op.alter_column("source_exclusion", "source", nullable=True)
    op.drop_constraint("uq_source_exclusion_tenant_id_source", "source_exclusion")
    op.create_unique_constraint("uq_source_exclusion_tenant_id_source_digest",
                                "source_exclusion", ["tenant_id", "source_digest"])

    statuses = ("pending_approval", "pending", "running", "awaiting_artifacts", "on_hold",
                "completed", "failed", "cancelled")
    open_statuses = ", ".join(f"'{s}'" for s in statuses[:5])
    op.create_table(
        "erasure_request",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("tenant_id", sa.Uuid(), sa.ForeignKey("tenant.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("subject", sa.String(255)),
        sa.Column("subject_digest", sa.String(64), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.String(500)),
        sa.Column("requested_by", sa.String(200)),
        sa.Column("filed_by", sa.String(100), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.Column("approved_at", sa.DateTime(timezone=True)),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("completed_at", sa.DateTime(timezone=True)),
        sa.Column("vacuumed_at", sa.DateTime(timezone=True)),
        sa.Column("cancelled_at", sa.DateTime(timezone=True)),
        sa.Column("error", sa.String(200)),
        sa.Column("progress_done", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("progress_total", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("counts", postgresql.JSONB(), nullable=False, server_default="{}"),
        sa.Column("held", postgresql.JSONB(), nullable=False, server_default="[]"),
        sa.CheckConstraint("status IN (" + ", ".join(f"'{s}'" for s in statuses) + ")",
                           name="status"),
    )
    op.create_index("uq_erasure_request_open_subject", "erasure_request",
                    ["tenant_id", "subject_digest"], unique=True,
                    postgresql_where=sa.text(f"status IN ({open_statuses})"))
    op.create_index("ix_erasure_request_tenant_id_created_at_id", "erasure_request",
                    ["tenant_id", "created_at", "id"])
    op.create_index("ix_erasure_request_tenant_id_status", "erasure_request",
                    ["tenant_id", "status"])
    rls.protect("erasure_request")

    op.create_table(
        "erasure_target",
        sa.Column("request_id", sa.Uuid(),
                  sa.ForeignKey("erasure_request.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("memory_id", sa.Uuid(), sa.ForeignKey("memory.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("tenant_id", sa.Uuid(), sa.ForeignKey("tenant.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("derived", sa.Boolean(), nullable=False),
        sa.Column("held_by", sa.Uuid()),
        sa.Column("done", sa.Boolean(), nullable=False, server_default="false"),
        sa.Column("erased_seq", sa.Integer()),
    )
    op.create_index("ix_erasure_target_request_id_done_memory_id", "erasure_target",
                    ["request_id", "done", "memory_id"])
    rls.protect("erasure_target")

    op.add_column("artifact", sa.Column(
        "erasure_request_id", sa.Uuid(),
        sa.ForeignKey("erasure_request.id", ondelete="SET NULL"), nullable=True))
    op.create_index("ix_artifact_erasure_request_id", "artifact", ["erasure_request_id"])


def downgrade() -> None:
    op.drop_index("ix_artifact_erasure_request_id", "artifact")
    op.drop_column("artifact", "erasure_request_id")
    for table in ("erasure_target", "erasure_request"):
        rls.unprotect(table)
        op.drop_table(table)
    op.drop_constraint("uq_source_exclusion_tenant_id_source_digest", "source_exclusion")
    # Exclusions an erasure left with a digest only cannot be named again: they go.
    op.execute("DELETE FROM source_exclusion WHERE source IS NULL")
    op.alter_column("source_exclusion", "source", nullable=False)
    op.create_unique_constraint("uq_source_exclusion_tenant_id_source", "source_exclusion",
                                ["tenant_id", "source"])
    op.drop_column("source_exclusion", "source_digest")
    op.drop_column("tenant", "digest_key")
