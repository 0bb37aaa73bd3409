"""Index a subject's memories by `updated_at`, so recall finds those changed since the lists
index was built.

Revision ID: 0012_changed_memories_index
Revises: 0011_keyword_caps
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012_changed_memories_index"
down_revision: str | None = "0011_keyword_caps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_memory_tenant_id_subject_updated_at"


def upgrade() -> None:
    # A large subject's recall sorts, beside its walk of the lists index, the memories changed
    # since that index was built (docs/decisions.md). Without this index finding them read
    # every memory row of the subject, or of the table when the subject is most of it: 18 ms
    # for none at 50,000 of 120,000.
    op.create_index(INDEX, "memory", ["tenant_id", "subject", "updated_at"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="memory")
