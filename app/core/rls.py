"""Row-level security helpers shared by migrations.

Every tenant-owned table gets RLS enabled *and forced* (so even the owner is filtered) and one
policy comparing ``tenant_id`` with the transaction's tenant. No tenant set → no rows.
"""

from __future__ import annotations

from alembic import op

CURRENT_TENANT_FN = """
CREATE OR REPLACE FUNCTION lethe_current_tenant() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT NULLIF(current_setting('lethe.tenant_id', true), '')::uuid $$;
"""


def protect(table: str, *, column: str = "tenant_id", extra_using: str | None = None) -> None:
    """Enable + force RLS on ``table`` with the tenant policy (optionally widened for reads)."""
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY {table}_tenant_isolation ON {table} "
        f"USING ({column} = lethe_current_tenant()) "
        f"WITH CHECK ({column} = lethe_current_tenant())"
    )
    if extra_using:
        op.execute(
            f"CREATE POLICY {table}_extra_read ON {table} FOR SELECT USING ({extra_using})"
        )


def unprotect(table: str) -> None:
    op.execute(f"DROP POLICY IF EXISTS {table}_extra_read ON {table}")
    op.execute(f"DROP POLICY IF EXISTS {table}_tenant_isolation ON {table}")
    op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
