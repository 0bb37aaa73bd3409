"""Plan each term's keyword lookup for pages in memory, on one core.

Revision ID: 0013_keyword_lookup_costs
Revises: 0012_changed_memories_index
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013_keyword_lookup_costs"
down_revision: str | None = "0012_changed_memories_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SIGNATURE = "public.lethe_keyword_matches(text, text[], tsquery[], integer)"

# A term's lookup (migration 0011) goes from the term's versions in the GIN index to their
# memories, or reads the subject's memories and hashes the term's versions against them. At
# PostgreSQL's default random_page_cost (4, disks that seek) the planner took the second way
# for any subject that is a large share of the table, and read all of its memory rows once per
# term: 15–35 ms a term in a subject of 50,000 where following ≈ 500 matches by index takes
# 5–7 ms. The pages a recall reads are the hot ones, in shared buffers or the OS cache, which
# is what 1.1 says. Parallel workers are kept out: at 1.1 the planner gathered workers for
# the commoner terms, which takes the cores that concurrent recalls need for no gain (measured
# the same or slower on two cores). Both apply inside the function only.
SETTINGS = {"random_page_cost": "1.1", "max_parallel_workers_per_gather": "0"}


def upgrade() -> None:
    actions = " ".join(f"SET {name} = {value}" for name, value in SETTINGS.items())
    op.execute(f"ALTER FUNCTION {SIGNATURE} {actions}")


def downgrade() -> None:
    op.execute(f"ALTER FUNCTION {SIGNATURE} " + " ".join(f"RESET {name}" for name in SETTINGS))
