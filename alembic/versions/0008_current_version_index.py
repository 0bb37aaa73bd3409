"""Index `memory.current_version_id`, so a large subject's recall can walk the HNSW index.

Revision ID: 0008_current_version_index
Revises: 0007_key_lookup
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008_current_version_index"
down_revision: str | None = "0007_key_lookup"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_memory_current_version_id"


def upgrade() -> None:
    # The HNSW index lists versions; recall wants current versions of one subject. Without a
    # way from a version to the memory whose current version it is, the planner's only plan
    # was to sort all of a subject's rows, whatever their number (150 ms at 50,000). The same
    # index spares the foreign-key check a scan of `memory` for every deleted version.
    op.create_index(INDEX, "memory", ["current_version_id"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="memory")
