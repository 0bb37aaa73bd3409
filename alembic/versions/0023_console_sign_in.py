"""Console sign-in: staff rows found by email before the tenant is known; failed attempts.

Revision ID: 0023_console_sign_in
Revises: 0022_limits
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023_console_sign_in"
down_revision: str | None = "0022_limits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Staff sign in with email and password, and the email names no tenant. As the api_key
# policy does for a key's hash, a transaction that names an email in `lethe.sign_in_email`
# may *read* the staff rows with that email (in whichever tenants); it sees no other row and
# can change none. The sign-in clears the setting before it goes on.
SIGN_IN_READ = (
    "CREATE POLICY staff_sign_in_read ON staff FOR SELECT "
    "USING (email = NULLIF(current_setting('lethe.sign_in_email', true), ''))"
)


def upgrade() -> None:
    op.execute(SIGN_IN_READ)
    op.create_table(
        "staff_sign_in_throttle",
        sa.Column("email_digest", sa.String(64), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_failure_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("email_digest", name="pk_staff_sign_in_throttle"),
    )


def downgrade() -> None:
    op.drop_table("staff_sign_in_throttle")
    op.execute("DROP POLICY IF EXISTS staff_sign_in_read ON staff")
