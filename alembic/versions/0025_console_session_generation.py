"""Console sessions that end on the server: a per-staff session generation.

Revision ID: 0025_console_session_generation
Revises: 0024_sessions_working
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025_console_session_generation"
down_revision: str | None = "0024_sessions_working"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A console cookie carries the generation it was issued under; signing out, removal and
    # a role change add one, so every cookie issued before stops working.
    op.add_column("staff", sa.Column("session_generation", sa.Integer(), server_default="0",
                                     nullable=False))


def downgrade() -> None:
    op.drop_column("staff", "session_generation")
