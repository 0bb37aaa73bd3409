"""Artifacts and webhooks; the tenant settings `forget.cascade` and `retractions.keep_about`.

Revision ID: 0017_artifacts_webhooks
Revises: 0016_legal_holds
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0017_artifacts_webhooks"
down_revision: str | None = "0016_legal_holds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")


def _timestamp(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True),
                     server_default=None if nullable else NOW, nullable=nullable)


def upgrade() -> None:
    # Where an artifact came from is in `provenance_edge` (child_kind 'artifact').
    op.create_table(
        "artifact",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(100), nullable=False),
        sa.Column("ref", sa.String(500), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        _timestamp("created_at"),
        _timestamp("erase_requested_at", nullable=True),
        _timestamp("acknowledged_at", nullable=True),
        sa.CheckConstraint("status IN ('active', 'erase_requested', 'erased')",
                           name="ck_artifact_status"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_artifact_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_artifact"),
    )
    op.create_index("ix_artifact_tenant_id_created_at_id", "artifact",
                    ["tenant_id", "created_at", "id"])
    op.create_index("ix_artifact_tenant_id_status", "artifact", ["tenant_id", "status"])
    rls.protect("artifact")

    op.create_table(
        "webhook",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("events", postgresql.JSONB(), nullable=False),
        _timestamp("created_at"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_webhook_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_webhook"),
    )
    op.create_index("ix_webhook_tenant_id_created_at_id", "webhook",
                    ["tenant_id", "created_at", "id"])
    rls.protect("webhook")

    op.create_table(
        "webhook_delivery",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("webhook_id", sa.Uuid(), nullable=False),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(200), nullable=True),
        _timestamp("next_attempt_at", nullable=True),
        _timestamp("last_attempt_at", nullable=True),
        _timestamp("delivered_at", nullable=True),
        _timestamp("created_at"),
        sa.CheckConstraint("status IN ('pending', 'delivered', 'failed')",
                           name="ck_webhook_delivery_status"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_webhook_delivery_tenant_id_tenant", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["webhook_id"], ["webhook.id"],
                                name="fk_webhook_delivery_webhook_id_webhook",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_delivery"),
    )
    op.create_index("ix_webhook_delivery_webhook_id_created_at", "webhook_delivery",
                    ["webhook_id", "created_at"])
    op.create_index("ix_webhook_delivery_tenant_id_status_next_attempt_at", "webhook_delivery",
                    ["tenant_id", "status", "next_attempt_at"])
    rls.protect("webhook_delivery")

    # Existing tenants read an empty object as the defaults (`flag`, keep the phrase).
    for column in ("forget", "retractions"):
        op.add_column("tenant_settings", sa.Column(column, postgresql.JSONB(),
                                                   server_default="{}", nullable=False))


def downgrade() -> None:
    for column in ("retractions", "forget"):
        op.drop_column("tenant_settings", column)
    for table in ("webhook_delivery", "webhook", "artifact"):
        rls.unprotect(table)
        op.drop_table(table)
