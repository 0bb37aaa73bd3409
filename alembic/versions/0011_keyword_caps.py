"""Keyword matches read at most `per_term` memories a term, each term planned for itself.

Revision ID: 0011_keyword_caps
Revises: 0010_keyword_lookup
Create Date: 2026-12-02
"""

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0011_keyword_caps"
down_revision: str | None = "0010_keyword_lookup"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Recall's keyword list only needs to know, of a term found in more than its share of the
# subject's memories, that it is that common (it never testifies: app/recall/candidates.py).
# Counting such a term exactly read every memory containing it: "work" in a subject of
# 50,000 meant a bitmap over 21,000 versions and each one's heap page, ≈ 190 ms, most of a
# recall. So each term now stops at `per_term` matches (the caller passes one more than a
# term may have and still testify), and each term is its own statement, planned for its own
# value: a rare term is answered from the GIN index, a common one by reading the subject's
# rows until `per_term` are found. The rights, the tenant filter and the pinned search_path
# are migration 0010's, for the same reasons (see there).
NAME = "public.lethe_keyword_matches"
OLD_SIGNATURE = f"{NAME}(text, text[], tsquery[])"
SIGNATURE = f"{NAME}(text, text[], tsquery[], integer)"
KEYWORD_MATCHES_FN = f"""
CREATE OR REPLACE FUNCTION {NAME}(
    wanted_subject text, wanted_states text[], terms tsquery[], per_term integer
)
RETURNS TABLE (term tsquery, memory_id uuid)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS
$$
DECLARE
    wanted tsquery;
BEGIN
    FOREACH wanted IN ARRAY terms LOOP
        RETURN QUERY
            SELECT wanted, m.id
            FROM public.memory m
            JOIN public.memory_version v ON v.id = m.current_version_id
            WHERE m.tenant_id = public.lethe_current_tenant()
              AND v.tenant_id = public.lethe_current_tenant()
              AND m.subject = wanted_subject
              AND m.state = ANY(wanted_states)
              AND v.search @@ wanted
            LIMIT per_term;
    END LOOP;
END
$$;
"""


def upgrade() -> None:
    op.execute(f"DROP FUNCTION IF EXISTS {OLD_SIGNATURE}")
    op.execute(KEYWORD_MATCHES_FN)
    op.execute(f"REVOKE EXECUTE ON FUNCTION {SIGNATURE} FROM PUBLIC")


def downgrade() -> None:
    op.execute(f"DROP FUNCTION IF EXISTS {SIGNATURE}")
    _previous().upgrade()


def _previous():  # type: ignore[no-untyped-def]
    """Migration 0010's module, whose function this one replaced."""
    path = Path(__file__).with_name("0010_keyword_lookup.py")
    spec = importlib.util.spec_from_file_location("lethe_migration_0010", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
