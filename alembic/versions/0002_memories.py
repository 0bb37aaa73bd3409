"""Memories: memory, memory_version (vector + full-text), provenance_edge; row-level security.

Revision ID: 0002_memories
Revises: 0001_foundation
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

from app.core import rls

revision: str = "0002_memories"
down_revision: str | None = "0001_foundation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")


def _tenant_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["tenant_id"], ["tenant.id"], name=f"fk_{table}_tenant_id_tenant", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "memory",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("key", sa.String(255), nullable=True),
        sa.Column("volatility", sa.String(20), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("current_version_id", sa.Uuid(), nullable=True),
        sa.Column("source", sa.String(255), nullable=True),
        sa.Column("depends_on", postgresql.JSONB(), server_default="{}", nullable=False),
        sa.Column("metadata", postgresql.JSONB(), server_default="{}", nullable=False),
        sa.Column("superseded_by", sa.Uuid(), nullable=True),
        sa.Column("flags", postgresql.JSONB(), server_default="[]", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column(
            "last_validated_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False
        ),
        sa.CheckConstraint(
            "volatility IN ('structural', 'preferential', 'procedural', 'situational')",
            name="ck_memory_volatility",
        ),
        sa.CheckConstraint(
            "state IN ('active', 'suspect', 'deprecated', 'quarantined', 'forgotten')",
            name="ck_memory_state",
        ),
        sa.CheckConstraint("revision >= 1", name="ck_memory_revision"),
        _tenant_fk("memory"),
        sa.ForeignKeyConstraint(
            ["superseded_by"], ["memory.id"], name="fk_memory_superseded_by_memory",
            # A superseded memory names its replacement before the replacement row exists.
            deferrable=True, initially="DEFERRED",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_memory"),
    )
    op.create_index("ix_memory_tenant_id_subject_state", "memory",
                    ["tenant_id", "subject", "state"])
    op.create_index("ix_memory_tenant_id_created_at_id", "memory",
                    ["tenant_id", "created_at", "id"])
    op.create_index("ix_memory_superseded_by", "memory", ["superseded_by"])
    # One live memory per (subject, key) slot.
    op.create_index(
        "uq_memory_live_slot", "memory", ["tenant_id", "subject", "key"], unique=True,
        postgresql_where=sa.text("key IS NOT NULL AND state IN ('active', 'suspect')"),
    )
    rls.protect("memory")

    op.create_table(
        "memory_version",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("memory_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding", Vector(384), nullable=True),
        sa.Column(
            "search", postgresql.TSVECTOR(),
            sa.Computed("to_tsvector('english', text)", persisted=True),
        ),
        sa.Column("operation_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        _tenant_fk("memory_version"),
        sa.ForeignKeyConstraint(
            ["memory_id"], ["memory.id"], name="fk_memory_version_memory_id_memory",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_memory_version"),
        sa.UniqueConstraint("memory_id", "seq", name="uq_memory_version_memory_id_seq"),
    )
    op.create_index(
        "ix_memory_version_embedding", "memory_version", ["embedding"],
        postgresql_using="hnsw", postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index("ix_memory_version_search", "memory_version", ["search"],
                    postgresql_using="gin")
    op.create_index("ix_memory_version_tenant_id", "memory_version", ["tenant_id"])
    rls.protect("memory_version")
    op.create_foreign_key(
        "fk_memory_current_version_id", "memory", "memory_version",
        ["current_version_id"], ["id"],
    )

    op.create_table(
        "provenance_edge",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("child_kind", sa.String(20), nullable=False),
        sa.Column("child_id", sa.Uuid(), nullable=False),
        sa.Column("parent_kind", sa.String(20), nullable=False),
        sa.Column("parent_ref", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.CheckConstraint("parent_kind IN ('source', 'memory')",
                           name="ck_provenance_edge_parent_kind"),
        _tenant_fk("provenance_edge"),
        sa.PrimaryKeyConstraint("id", name="pk_provenance_edge"),
    )
    op.create_index("ix_provenance_edge_tenant_id_child_id", "provenance_edge",
                    ["tenant_id", "child_id"])
    op.create_index("ix_provenance_edge_tenant_id_parent_kind_parent_ref", "provenance_edge",
                    ["tenant_id", "parent_kind", "parent_ref"])
    rls.protect("provenance_edge")


def downgrade() -> None:
    rls.unprotect("provenance_edge")
    op.drop_table("provenance_edge")
    op.drop_constraint("fk_memory_current_version_id", "memory", type_="foreignkey")
    for table in ("memory_version", "memory"):
        rls.unprotect(table)
        op.drop_table(table)
