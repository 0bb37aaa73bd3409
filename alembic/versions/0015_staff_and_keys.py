"""Console staff; API keys remember when they were last used.

Revision ID: 0015_staff_and_keys
Revises: 0014_subject_routed_index
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.core import rls

revision: str = "0015_staff_and_keys"
down_revision: str | None = "0014_subject_routed_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")

# The lookup of 0007, now also noting when a key was last used: at most once a minute per key,
# so nearly every request still costs one index read and nothing is written. It runs with
# the caller's rights, and the api_key policy lets a transaction that names a hash only *read*
# that key's row; to write the stamp it names the key's own tenant for that one UPDATE (the
# key just proved it belongs there) and then restores whatever tenant was named before. A key
# row locked by a running deletion is skipped rather than waited for, and a read-only
# transaction (a standby) writes nothing. A revoked key is not found.
KEY_LOOKUP_FN = """
CREATE OR REPLACE FUNCTION lethe_api_key(presented_hash text)
RETURNS TABLE (id uuid, tenant_id uuid, role varchar)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS
$$
#variable_conflict use_column
DECLARE
    found_key record;
    named_tenant text;
BEGIN
    PERFORM set_config('lethe.auth_key_hash', presented_hash, true);
    SELECT k.id, k.tenant_id, k.role, k.last_used_at INTO found_key
        FROM api_key k
        WHERE k.key_hash = presented_hash AND k.revoked_at IS NULL;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF (found_key.last_used_at IS NULL
            OR found_key.last_used_at < now() - interval '60 seconds')
            AND current_setting('transaction_read_only') = 'off' THEN
        named_tenant := current_setting('lethe.tenant_id', true);
        PERFORM set_config('lethe.tenant_id', found_key.tenant_id::text, true);
        UPDATE api_key SET last_used_at = now()
            WHERE api_key.id = (
                SELECT k.id FROM api_key k
                WHERE k.id = found_key.id
                  AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '60 seconds')
                FOR UPDATE SKIP LOCKED);
        PERFORM set_config('lethe.tenant_id', coalesce(named_tenant, ''), true);
    END IF;
    RETURN QUERY SELECT found_key.id, found_key.tenant_id, found_key.role;
END
$$;
"""

PREVIOUS_KEY_LOOKUP_FN = """
CREATE OR REPLACE FUNCTION lethe_api_key(presented_hash text)
RETURNS TABLE (id uuid, tenant_id uuid, role varchar)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS
$$
BEGIN
    PERFORM set_config('lethe.auth_key_hash', presented_hash, true);
    RETURN QUERY
        SELECT k.id, k.tenant_id, k.role FROM api_key k
        WHERE k.key_hash = presented_hash AND k.revoked_at IS NULL;
END
$$;
"""


def upgrade() -> None:
    op.create_table(
        "staff",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=NOW, nullable=False),
        sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("role IN ('officer', 'viewer')", name="role"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"],
                                name="fk_staff_tenant_id_tenant", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_staff"),
    )
    # One active account per email and tenant; a removed member's row frees the email.
    op.create_index("uq_staff_tenant_id_email", "staff", ["tenant_id", "email"], unique=True,
                    postgresql_where=sa.text("removed_at IS NULL"))
    rls.protect("staff")

    op.add_column("api_key", sa.Column("last_used_at", sa.DateTime(timezone=True),
                                       nullable=True))
    op.execute(KEY_LOOKUP_FN)


def downgrade() -> None:
    op.execute(PREVIOUS_KEY_LOOKUP_FN)
    op.drop_column("api_key", "last_used_at")
    rls.unprotect("staff")
    op.drop_table("staff")
