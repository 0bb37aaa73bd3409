"""Keyword matches through the GIN index: `lethe_keyword_matches(subject, states, terms)`.

Revision ID: 0010_keyword_lookup
Revises: 0009_inline_versions
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010_keyword_lookup"
down_revision: str | None = "0009_inline_versions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Under row-level security PostgreSQL never answers `@@` from the GIN index on
# `memory_version.search`: the operator is not leakproof, so it may not run in an index scan
# ahead of the tenant policy, and recall's keyword list tested every row of the subject
# (≈ 90 ms at 50,000). This function runs with its owner's rights and applies the tenant
# itself, on both tables, from the setting the policy reads. When the owner bypasses
# row-level security (a superuser, as in the embedded server, or BYPASSRLS) the tenant is an
# ordinary filter and the planner may take the index: the keyword list for a rare term in a
# subject of 50,000 takes ≈ 3 ms. When the owner does not, the policy applies inside too:
# the same answers, at the old cost. No tenant set → no rows.
#
# It returns (term, memory ID) pairs only, never text, and only for current versions of the
# tenant's memories of one subject in the given states. Only the application role may run it
# (granted in app/core/migrations.py, grant_app_role). `search_path` is pinned and every
# object qualified, so nothing another role creates can stand in for them with the owner's
# rights. Each call is planned for its own arguments: the subject's size and how often the
# terms occur decide between the index and the subject's rows, and a plan kept from another
# subject would be wrong for this one. All terms are looked up in one pass (`@@ ANY`), so
# common terms cost one reading of the rows, not one per term; the rows found are then paired
# with the terms they match.
NAME = "public.lethe_keyword_matches"
SIGNATURE = f"{NAME}(text, text[], tsquery[])"
KEYWORD_MATCHES_FN = f"""
CREATE OR REPLACE FUNCTION {NAME}(
    wanted_subject text, wanted_states text[], terms tsquery[]
)
RETURNS TABLE (term tsquery, memory_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS
$$
    WITH found AS MATERIALIZED (
        SELECT m.id, v.search
        FROM public.memory m
        JOIN public.memory_version v ON v.id = m.current_version_id
        WHERE m.tenant_id = public.lethe_current_tenant()
          AND v.tenant_id = public.lethe_current_tenant()
          AND m.subject = wanted_subject
          AND m.state = ANY(wanted_states)
          AND v.search @@ ANY(terms)
    )
    SELECT t.term, found.id
    FROM found JOIN unnest(terms) AS t(term) ON found.search @@ t.term
$$;
"""


def upgrade() -> None:
    op.execute(KEYWORD_MATCHES_FN)
    op.execute(f"REVOKE EXECUTE ON FUNCTION {SIGNATURE} FROM PUBLIC")


def downgrade() -> None:
    op.execute(f"DROP FUNCTION IF EXISTS {SIGNATURE}")
