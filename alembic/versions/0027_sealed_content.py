"""Memory texts, metadata and retraction phrases sealed under their subject's data key;
keyword search over keyed hashes of their terms.

Revision ID: 0027_sealed_content
Revises: 0026_keys
Create Date: 2026-12-04
"""

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from psycopg.types.json import Jsonb
from sqlalchemy.dialects.postgresql import JSONB

from app.core import db
from app.keys import digests
from app.memories import sealing, search_terms

revision: str = "0027_sealed_content"
down_revision: str | None = "0026_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

# Rows sealed per statement: one statement reads a batch's lexemes, one writes it back.
BATCH = 500
# What this revision seals. FORCE row-level security would hide every row from an owner
# that is no superuser, so it is lifted while the rows are sealed (as in 0006). The updates
# leave the plaintext in dead tuples; `lethe migrate` rewrites these tables once this
# transaction has committed (`app.core.migrations.REWRITTEN_AFTER`: VACUUM FULL, new files,
# the old ones removed at the next checkpoint).
TABLES = ("memory", "memory_version", "retraction", "subject_term", "subject_text")


def upgrade() -> None:
    conn = db.driver_connection(op.get_bind())
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    op.add_column("memory_version", sa.Column("sealed_text", sa.LargeBinary(), nullable=True))
    op.add_column("memory", sa.Column("sealed_metadata", sa.LargeBinary(), nullable=False,
                                      server_default=sa.text("''")))
    op.add_column("retraction", sa.Column("sealed_about", sa.LargeBinary(), nullable=True))
    # The search terms are written with the text from now on (app/memories/search_terms.py).
    op.execute("ALTER TABLE memory_version ALTER COLUMN search DROP EXPRESSION")
    _seal_versions(conn)
    _seal_metadata(conn)
    _seal_abouts(conn)
    op.drop_column("memory_version", "text")
    op.drop_column("memory", "metadata")
    op.drop_column("retraction", "about")
    op.alter_column("memory_version", "sealed_text", nullable=False)
    op.execute("ALTER TABLE memory_version ALTER COLUMN search SET DEFAULT ''::tsvector,"
               " ALTER COLUMN search SET NOT NULL")
    op.execute(f"DROP FUNCTION {OLD_BM25_SIGNATURE}")
    op.execute(BM25_FN.format(terms="terms text[]", query_terms="terms"))
    op.execute(f"REVOKE EXECUTE ON FUNCTION {BM25_SIGNATURE} FROM PUBLIC")
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")


def _key(tenant_id: Any, subject: str) -> str:
    """What names the subject's data key: its digest (the subject was still in clear here;
    0028 stores the digest in its place). An erasure's stand-in names none: its rows hold
    nothing to seal."""
    return digests.subject_digest(tenant_id, subject)


def _progress(what: str, done: int, total: int) -> None:
    log.info("Sealing %s: %d of %d", what, done, total)


def _seal_versions(conn: Any) -> None:
    [total] = conn.execute("SELECT count(*) FROM memory_version").fetchone()
    done = 0
    while True:
        rows = conn.execute(
            "SELECT v.id, m.tenant_id, m.subject, v.text FROM memory_version v"
            " JOIN memory m ON m.id = v.memory_id WHERE v.sealed_text IS NULL"
            " ORDER BY v.id LIMIT %s", (BATCH,)).fetchall()
        if not rows:
            break
        terms = search_terms.lexemes(conn, [row[3] for row in rows])
        ids, sealed, documents = [], [], []
        for (version_id, tenant_id, subject, text), lexemes in zip(rows, terms, strict=True):
            ids.append(version_id)
            sealed.append(sealing.seal_text(tenant_id, _key(tenant_id, subject), version_id, text))
            documents.append(search_terms.document(
                sealing.key_for_writing(tenant_id, _key(tenant_id, subject)), lexemes) if lexemes else "")
        # The triggers of 0021 move each live memory's statistics from its words to its
        # hashes as its current version's search terms change.
        conn.execute(
            "UPDATE memory_version v SET sealed_text = u.sealed, search = u.search::tsvector"
            " FROM unnest(%s::uuid[], %s::bytea[], %s::text[]) AS u(id, sealed, search)"
            " WHERE v.id = u.id", (ids, sealed, documents))
        done += len(rows)
        _progress("versions", done, total)


def _seal_metadata(conn: Any) -> None:
    [total] = conn.execute(
        "SELECT count(*) FROM memory WHERE metadata <> '{}'::jsonb").fetchone()
    done, after = 0, None
    while True:
        rows = conn.execute(
            "SELECT id, tenant_id, subject, metadata FROM memory"
            " WHERE metadata <> '{}'::jsonb AND (%s::uuid IS NULL OR id > %s::uuid)"
            " ORDER BY id LIMIT %s", (after, after, BATCH)).fetchall()
        if not rows:
            break
        conn.execute(
            "UPDATE memory m SET sealed_metadata = u.sealed"
            " FROM unnest(%s::uuid[], %s::bytea[]) AS u(id, sealed) WHERE m.id = u.id",
            ([row[0] for row in rows],
             [sealing.seal_metadata(tenant_id, _key(tenant_id, subject), memory_id, metadata)
              for memory_id, tenant_id, subject, metadata in rows]))
        after = rows[-1][0]
        done += len(rows)
        _progress("metadata", done, total)


def _seal_abouts(conn: Any) -> None:
    rows = conn.execute(
        "SELECT id, tenant_id, subject, about FROM retraction WHERE about IS NOT NULL"
        " ORDER BY id").fetchall()
    for start in range(0, len(rows), BATCH):
        batch = rows[start:start + BATCH]
        conn.execute(
            "UPDATE retraction r SET sealed_about = u.sealed"
            " FROM unnest(%s::uuid[], %s::bytea[]) AS u(id, sealed) WHERE r.id = u.id",
            ([row[0] for row in batch],
             [sealing.seal_about(tenant_id, _key(tenant_id, subject), retraction_id, about)
              for retraction_id, tenant_id, subject, about in batch]))
        _progress("retraction phrases", start + len(batch), len(rows))


def downgrade() -> None:
    conn = db.driver_connection(op.get_bind())
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    op.execute(f"DROP FUNCTION {BM25_SIGNATURE}")
    op.execute(BM25_FN.format(
        terms="query text",
        query_terms="tsvector_to_array(to_tsvector('english', query))"))
    op.execute(f"REVOKE EXECUTE ON FUNCTION {OLD_BM25_SIGNATURE} FROM PUBLIC")
    op.add_column("memory_version", sa.Column("text", sa.Text(), nullable=True))
    op.add_column("memory", sa.Column("metadata", JSONB(),
                                      nullable=False, server_default="{}"))
    op.add_column("retraction", sa.Column("about", sa.String(200), nullable=True))
    for version_id, tenant_id, subject, sealed in conn.execute(
            "SELECT v.id, m.tenant_id, m.subject, v.sealed_text FROM memory_version v"
            " JOIN memory m ON m.id = v.memory_id").fetchall():
        conn.execute("UPDATE memory_version SET text = %s WHERE id = %s",
                     (sealing.open_text(tenant_id, _key(tenant_id, subject), version_id, sealed), version_id))
    for memory_id, tenant_id, subject, sealed in conn.execute(
            "SELECT id, tenant_id, subject, sealed_metadata FROM memory"
            " WHERE sealed_metadata <> ''").fetchall():
        conn.execute("UPDATE memory SET metadata = %s WHERE id = %s", (
            Jsonb(sealing.open_metadata(tenant_id, _key(tenant_id, subject), memory_id, sealed)), memory_id))
    for retraction_id, tenant_id, subject, sealed in conn.execute(
            "SELECT id, tenant_id, subject, sealed_about FROM retraction"
            " WHERE sealed_about IS NOT NULL").fetchall():
        conn.execute("UPDATE retraction SET about = %s WHERE id = %s",
                     (sealing.open_about(tenant_id, _key(tenant_id, subject), retraction_id, sealed),
                      retraction_id))
    op.alter_column("memory_version", "text", nullable=False)
    op.drop_column("memory_version", "sealed_text")
    op.drop_column("memory", "sealed_metadata")
    op.drop_column("retraction", "sealed_about")
    # The generated column again, and the statistics counted from its words.
    op.execute("DROP INDEX ix_memory_version_search")
    op.execute("ALTER TABLE memory_version DROP COLUMN search")
    op.execute("ALTER TABLE memory_version ADD COLUMN search tsvector"
               " GENERATED ALWAYS AS (to_tsvector('english', text)) STORED")
    op.execute("CREATE INDEX ix_memory_version_search ON memory_version USING gin (search)")
    op.execute("DELETE FROM subject_term")
    op.execute("DELETE FROM subject_text")
    op.execute(RECOUNT)
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")


RECOUNT = """
SELECT lethe_count_texts(array_agg(m.tenant_id), array_agg(m.subject::text),
                         array_agg(v.search), array_agg(1))
FROM memory m JOIN memory_version v ON v.id = m.current_version_id
WHERE m.state IN ('active', 'suspect')
"""

OLD_BM25_SIGNATURE = ("public.lethe_bm25(text, text[], text, integer, double precision,"
                      " double precision)")
BM25_SIGNATURE = ("public.lethe_bm25(text, text[], text[], integer, double precision,"
                  " double precision)")
# Migration 0021's `lethe_bm25`, the query's terms now given hashed (`{terms}`, matched as
# `{query_terms}`): the statistics and the search column hold keyed hashes, which only the
# application can compute from a query's words.
BM25_FN = """
CREATE FUNCTION public.lethe_bm25(
    wanted_subject text, wanted_states text[], {terms}, wanted integer,
    k1 double precision, b double precision
)
RETURNS TABLE (memory_id uuid, score double precision)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
SET random_page_cost = 1.1
SET max_parallel_workers_per_gather = 0
AS
$$
DECLARE
    tenant uuid := public.lethe_current_tenant();
    live bigint;
    average double precision;
    wanted_terms text[];
    weights double precision[];
    found uuid[] := '{{}}';
    unread double precision;
    kth double precision;
    i integer;
BEGIN
    SELECT s.memories, s.length::float8 / s.memories INTO live, average
    FROM public.subject_text s
    WHERE s.tenant_id = tenant AND s.subject = wanted_subject AND s.memories > 0;
    IF live IS NULL OR average <= 0 THEN
        RETURN;
    END IF;
    SELECT array_agg(t.term ORDER BY t.memories, t.term),
           array_agg(ln(1 + (live - t.memories + 0.5) / (t.memories + 0.5))
                     ORDER BY t.memories, t.term)
    INTO wanted_terms, weights
    FROM public.subject_term t
    WHERE t.tenant_id = tenant AND t.subject = wanted_subject AND t.memories > 0
      AND t.term = ANY({query_terms});
    IF wanted_terms IS NULL THEN
        RETURN;
    END IF;
    FOR i IN 1 .. cardinality(wanted_terms) LOOP
        found := found || ARRAY(
            SELECT m.id
            FROM public.memory m
            JOIN public.memory_version v ON v.id = m.current_version_id
            WHERE m.tenant_id = tenant AND v.tenant_id = tenant
              AND m.subject = wanted_subject AND m.state = ANY(wanted_states)
              AND v.search @@ ('''' || replace(replace(wanted_terms[i], '\\', '\\\\'), '''',
                                               '''''') || '''')::tsquery);
        EXIT WHEN i = cardinality(wanted_terms);
        unread := (k1 + 1) * (SELECT sum(w) FROM unnest(weights[i + 1:]) AS w);
        IF cardinality(found) >= wanted THEN
            SELECT scored.score INTO kth
            FROM public.lethe_bm25_scored(found, wanted_terms, weights, average, k1, b) scored
            ORDER BY scored.score DESC
            OFFSET wanted - 1 LIMIT 1;
            EXIT WHEN kth >= unread;
        END IF;
    END LOOP;
    RETURN QUERY
        SELECT scored.memory_id, scored.score
        FROM public.lethe_bm25_scored(found, wanted_terms, weights, average, k1, b) scored
        ORDER BY scored.score DESC, scored.memory_id
        LIMIT wanted;
END
$$;
"""
