"""Keep a memory version's embedding in its row: `toast_tuple_target` 8160 on memory_version.

Revision ID: 0009_inline_versions
Revises: 0008_current_version_index
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009_inline_versions"
down_revision: str | None = "0008_current_version_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A version row is ≈ 2.1 kB (a 1,540-byte vector(384), the text and its tsvector), just over
# PostgreSQL's default 2 kB threshold, so the embedding went to the TOAST table: every distance
# computed from the heap (an exact sort of a subject's rows, the distance column of a walk)
# cost a second index lookup and page. At 8160 rows stay whole unless they do not fit a page.
# Measured on 100,000 memories: sorting a subject of 10,000 exactly 38 → 23 ms, of 50,000
# 132 → 75 ms (docs/benchmarks.md). Rows written before keep their out-of-line values until
# the table is rewritten (`VACUUM FULL memory_version`, which locks it while it runs).
TARGET = 8160


def upgrade() -> None:
    op.execute(f"ALTER TABLE memory_version SET (toast_tuple_target = {TARGET})")


def downgrade() -> None:
    op.execute("ALTER TABLE memory_version RESET (toast_tuple_target)")
