"""Key lookup in one statement: `lethe_api_key(key_hash)`.

Revision ID: 0007_key_lookup
Revises: 0006_retention
Create Date: 2026-11-29
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007_key_lookup"
down_revision: str | None = "0006_retention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Every request authenticates before its tenant is known. The api_key policy lets a
# transaction read the one row whose hash it names in `lethe.auth_key_hash`; this function
# names the hash and reads the row in one statement, so a lookup needs no transaction of its
# own (BEGIN, set_config, SELECT, COMMIT: four round trips, now one). It runs with the
# caller's rights (row-level security still decides), and the setting is transaction-local:
# in autocommit it ends with the statement.
KEY_LOOKUP_FN = """
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
    op.execute(KEY_LOOKUP_FN)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS lethe_api_key(text)")
