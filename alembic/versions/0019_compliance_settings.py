"""The tenant settings `erasure` (due days, approval gate) and `console` (session idle minutes).

Revision ID: 0019_compliance_settings
Revises: 0018_access_requests
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0019_compliance_settings"
down_revision: str | None = "0018_access_requests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing tenants read an empty object as the defaults (30 days, no approval; 30 minutes).
    for column in ("erasure", "console"):
        op.add_column("tenant_settings", sa.Column(column, postgresql.JSONB(),
                                                   server_default="{}", nullable=False))


def downgrade() -> None:
    for column in ("console", "erasure"):
        op.drop_column("tenant_settings", column)
