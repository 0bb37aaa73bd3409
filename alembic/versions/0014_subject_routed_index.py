"""Index each version's vector beside a code of its subject, so a walk finds the subject first.

Revision ID: 0014_subject_routed_index
Revises: 0013_keyword_lookup_costs
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_subject_routed_index"
down_revision: str | None = "0013_keyword_lookup_costs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The HNSW index held the bare vectors, so a walk filtered to one subject passed every other
# subject's nearest on its way: at 0.1 % of the table it visited ≈ 20,000 versions for its ten
# and still found only 0.86 of the exact top ten. Now each version is indexed as its unit
# vector followed by ROUTE_DIMENSIONS coordinates of ±ROUTE_WEIGHT, the bits of a hash of its
# tenant and subject. Within a subject the code cancels out, so the L2 order is the cosine
# order; to another subject's vectors the squared distance grows by 4 × ROUTE_WEIGHT² for
# each bit that differs (8 on average, 1 to 16, where unit vectors are at most 4 apart), so
# the graph holds each subject's versions together and a walk starts among them. Weight 0.5 keeps the subjects close enough that the graph stays one piece
# (docs/decisions.md, "The HNSW index is routed by subject").
ROUTE_DIMENSIONS = 16
ROUTE_WEIGHT = 0.5
EMBEDDING_DIMENSIONS = 384
INDEXED = f"(lethe_routed(embedding, route)::vector({EMBEDDING_DIMENSIONS + ROUTE_DIMENSIONS}))"

_CODE = ", ".join(
    f"CASE WHEN route & {1 << bit} = 0 THEN -{ROUTE_WEIGHT} ELSE {ROUTE_WEIGHT} END"
    for bit in range(ROUTE_DIMENSIONS))

# SQL-standard bodies (RETURN, BEGIN ATOMIC) resolve their names when created, so they work
# under the empty search_path that index builds and autovacuum run with; they still inline.
FUNCTIONS = f"""
CREATE FUNCTION lethe_subject_route(tenant uuid, subject text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN hashtextextended(tenant::text || '/' || subject, 0);

CREATE FUNCTION lethe_routed(embedding vector, route bigint) RETURNS vector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN l2_normalize(embedding) || ARRAY[{_CODE}]::real[]::vector;

CREATE FUNCTION lethe_version_route() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Always computed here, whatever the insert says: a wrong route would hide the version
    -- from its subject's walks.
    NEW.route := (SELECT public.lethe_subject_route(m.tenant_id, m.subject)
                  FROM public.memory m WHERE m.id = NEW.memory_id);
    IF NEW.route IS NULL THEN
        RAISE EXCEPTION 'memory_version % names no memory', NEW.id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
"""


def upgrade() -> None:
    op.execute(FUNCTIONS)
    # Drop the old index first: filling the column rewrites every row, which would otherwise
    # file each vector in it again.
    op.drop_index("ix_memory_version_embedding", table_name="memory_version")
    op.add_column("memory_version", sa.Column("route", sa.BigInteger(), nullable=True))
    op.execute("UPDATE memory_version v SET route = lethe_subject_route(m.tenant_id, m.subject)"
               " FROM memory m WHERE m.id = v.memory_id")
    op.alter_column("memory_version", "route", nullable=False)
    op.execute("CREATE TRIGGER memory_version_route BEFORE INSERT ON memory_version"
               " FOR EACH ROW EXECUTE FUNCTION lethe_version_route()")
    op.execute("CREATE INDEX ix_memory_version_routed ON memory_version"
               f" USING hnsw ({INDEXED} vector_l2_ops)")


def downgrade() -> None:
    op.drop_index("ix_memory_version_routed", table_name="memory_version")
    op.execute("DROP TRIGGER memory_version_route ON memory_version")
    op.drop_column("memory_version", "route")
    op.execute("DROP FUNCTION lethe_version_route(), lethe_routed(vector, bigint),"
               " lethe_subject_route(uuid, text)")
    op.create_index(
        "ix_memory_version_embedding", "memory_version", ["embedding"],
        postgresql_using="hnsw", postgresql_ops={"embedding": "vector_cosine_ops"},
    )
