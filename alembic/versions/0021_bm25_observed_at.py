"""BM25 term statistics per subject, kept by triggers; `observed_at` on memories.

Revision ID: 0021_bm25_observed_at
Revises: 0020_erasure
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.core import rls

revision: str = "0021_bm25_observed_at"
down_revision: str | None = "0020_erasure"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# BM25 weighs a term by how many of the subject's live memories hold it, and a memory's
# length against the subject's average (app/text/bm25.py). Counting either at recall time
# reads every memory of a large subject, so both are kept as the memories change:
# `subject_text` holds a subject's live memories and their summed length, `subject_term` how
# many of them hold each term. A memory counts while it is live (active or suspect) with its
# current version's lexemes (`memory_version.search`, the one tokenizer of keyword search);
# whatever moves it in or out (a state change, a new current version, a redacted or purged
# text, a delete) moves its terms in or out of the counts, and a term no live memory holds
# any longer loses its row: a forgotten memory's words leave no statistics behind.
#
# The triggers on updates are statement triggers over the transition tables, so a bulk
# update (a retention batch, a purge of every version) counts once per statement. Deletes
# are counted before the row goes (a row trigger), while the memory's current version is
# still there to say which terms to take away; a version deleted while its memory is counted
# takes its terms away itself (a tenant's rows may go in either order).
#
# They run with the writer's rights: the statistics are tenant rows under the same policy,
# written in the writer's tenant.

LIVE = "('active', 'suspect')"
# A memory's length in terms: its lexemes' positions (stop words hold none). A lexeme without
# positions counts once.
LENGTH = "(SELECT coalesce(sum(coalesce(cardinality(u.positions), 1)), 0) FROM unnest({doc}) u)"

FUNCTIONS = f"""
CREATE FUNCTION lethe_text_length(doc tsvector) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN {LENGTH.format(doc="doc")};

CREATE FUNCTION lethe_count_texts(
    tenants uuid[], subjects text[], docs tsvector[], signs integer[]
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- Rows locked in key order, subject totals before terms: concurrent writers of one
    -- subject queue on its totals row instead of deadlocking on terms.
    INSERT INTO public.subject_text AS s (tenant_id, subject, memories, length)
    SELECT d.tenant_id, d.subject, sum(d.sign), sum(d.sign * public.lethe_text_length(d.doc))
    FROM unnest(tenants, subjects, docs, signs) AS d(tenant_id, subject, doc, sign)
    WHERE d.doc IS NOT NULL
    GROUP BY d.tenant_id, d.subject
    ORDER BY d.tenant_id, d.subject
    ON CONFLICT (tenant_id, subject) DO UPDATE
        SET memories = s.memories + EXCLUDED.memories, length = s.length + EXCLUDED.length;
    DELETE FROM public.subject_text s
    USING unnest(tenants, subjects) AS d(tenant_id, subject)
    WHERE s.tenant_id = d.tenant_id AND s.subject = d.subject AND s.memories <= 0;

    INSERT INTO public.subject_term AS t (tenant_id, subject, term, memories)
    SELECT d.tenant_id, d.subject, lexeme, sum(d.sign)
    FROM unnest(tenants, subjects, docs, signs) AS d(tenant_id, subject, doc, sign)
    CROSS JOIN LATERAL unnest(tsvector_to_array(d.doc)) AS lexeme
    WHERE d.doc IS NOT NULL
    GROUP BY d.tenant_id, d.subject, lexeme
    HAVING sum(d.sign) <> 0
    ORDER BY d.tenant_id, d.subject, lexeme
    ON CONFLICT (tenant_id, subject, term) DO UPDATE SET memories = t.memories + EXCLUDED.memories;
    DELETE FROM public.subject_term t
    USING unnest(tenants, subjects, docs, signs) AS d(tenant_id, subject, doc, sign)
    CROSS JOIN LATERAL unnest(tsvector_to_array(d.doc)) AS lexeme
    WHERE d.sign < 0 AND t.tenant_id = d.tenant_id AND t.subject = d.subject
      AND t.term = lexeme AND t.memories <= 0;
END $$;

CREATE FUNCTION lethe_memory_inserted_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM public.lethe_count_texts(array_agg(n.tenant_id), array_agg(n.subject::text),
                                     array_agg(v.search), array_agg(1))
    FROM new_rows n JOIN public.memory_version v ON v.id = n.current_version_id
    WHERE n.state IN {LIVE};
    RETURN NULL;
END $$;

CREATE FUNCTION lethe_memory_updated_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- A memory counts with its current version while live; a row whose counted
    -- (version, tenant, subject) changed takes the old one's terms away and adds the new's.
    PERFORM public.lethe_count_texts(array_agg(moved.tenant_id), array_agg(moved.subject),
                                     array_agg(v.search), array_agg(moved.sign))
    FROM (
        SELECT side.tenant_id, side.subject, side.version, side.sign
        FROM old_rows o
        JOIN new_rows n ON n.id = o.id
        CROSS JOIN LATERAL (VALUES
            (o.tenant_id, o.subject::text,
             CASE WHEN o.state IN {LIVE} THEN o.current_version_id END, -1),
            (n.tenant_id, n.subject::text,
             CASE WHEN n.state IN {LIVE} THEN n.current_version_id END, 1)
        ) AS side(tenant_id, subject, version, sign)
        WHERE (CASE WHEN o.state IN {LIVE} THEN o.current_version_id END,
               o.tenant_id, o.subject)
              IS DISTINCT FROM
              (CASE WHEN n.state IN {LIVE} THEN n.current_version_id END,
               n.tenant_id, n.subject)
    ) moved
    JOIN public.memory_version v ON v.id = moved.version;
    RETURN NULL;
END $$;

CREATE FUNCTION lethe_memory_deleted_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.state IN {LIVE} AND OLD.current_version_id IS NOT NULL THEN
        PERFORM public.lethe_count_texts(ARRAY[OLD.tenant_id], ARRAY[OLD.subject::text],
                                         ARRAY[v.search], ARRAY[-1])
        FROM public.memory_version v WHERE v.id = OLD.current_version_id;
    END IF;
    RETURN OLD;
END $$;

CREATE FUNCTION lethe_version_updated_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM public.lethe_count_texts(
        array_agg(m.tenant_id ORDER BY s.sign), array_agg(m.subject::text ORDER BY s.sign),
        array_agg(CASE WHEN s.sign < 0 THEN o.search ELSE n.search END ORDER BY s.sign),
        array_agg(s.sign ORDER BY s.sign))
    FROM old_rows o
    JOIN new_rows n ON n.id = o.id
    JOIN public.memory m ON m.current_version_id = n.id AND m.state IN {LIVE}
    CROSS JOIN (VALUES (-1), (1)) AS s(sign)
    WHERE o.search IS DISTINCT FROM n.search;
    RETURN NULL;
END $$;

CREATE FUNCTION lethe_version_deleted_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM public.lethe_count_texts(ARRAY[m.tenant_id], ARRAY[m.subject::text],
                                     ARRAY[OLD.search], ARRAY[-1])
    FROM public.memory m WHERE m.current_version_id = OLD.id AND m.state IN {LIVE};
    RETURN OLD;
END $$;
"""

TRIGGERS = """
CREATE TRIGGER memory_inserted_text AFTER INSERT ON memory
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lethe_memory_inserted_text();
CREATE TRIGGER memory_updated_text AFTER UPDATE ON memory
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lethe_memory_updated_text();
CREATE TRIGGER memory_deleted_text BEFORE DELETE ON memory
    FOR EACH ROW EXECUTE FUNCTION lethe_memory_deleted_text();
CREATE TRIGGER memory_version_updated_text AFTER UPDATE ON memory_version
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lethe_version_updated_text();
CREATE TRIGGER memory_version_deleted_text BEFORE DELETE ON memory_version
    FOR EACH ROW EXECUTE FUNCTION lethe_version_deleted_text();
"""

# The statistics of the memories there already.
BACKFILL = f"""
SELECT lethe_count_texts(array_agg(m.tenant_id), array_agg(m.subject::text),
                         array_agg(v.search), array_agg(1))
FROM memory m JOIN memory_version v ON v.id = m.current_version_id
WHERE m.state IN {LIVE}
"""

# A large subject's BM25 list (app/recall/bm25_lists.py): the ``wanted`` best of the subject's
# memories in ``wanted_states`` for the query's terms, with document frequencies and average
# length from the statistics above (the subject's live memories). Exact, but it reads the
# matches of common terms only when it must: terms are taken rarest first, and each one's
# memories are scored in full (every query term they hold); once the ``wanted``-th score is at
# least what the terms not yet read could give a memory holding none of those read
# (Σ idf·(k1 + 1), which no term frequency reaches), no memory left unread can enter.
# Rights, tenant filter, pinned search_path and planner settings are lethe_keyword_matches'
# (migrations 0010, 0011, 0013), for the same reasons: under row-level security the GIN index
# could not answer a term.
BM25_NAME = "public.lethe_bm25"
BM25_SIGNATURE = f"{BM25_NAME}(text, text[], text, integer, double precision, double precision)"
BM25_FN = f"""
CREATE FUNCTION {BM25_NAME}(
    wanted_subject text, wanted_states text[], query text, wanted integer,
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
    terms text[];
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
    INTO terms, weights
    FROM public.subject_term t
    WHERE t.tenant_id = tenant AND t.subject = wanted_subject AND t.memories > 0
      AND t.term = ANY(tsvector_to_array(to_tsvector('english', query)));
    IF terms IS NULL THEN
        RETURN;
    END IF;
    FOR i IN 1 .. cardinality(terms) LOOP
        found := found || ARRAY(
            SELECT m.id
            FROM public.memory m
            JOIN public.memory_version v ON v.id = m.current_version_id
            WHERE m.tenant_id = tenant AND v.tenant_id = tenant
              AND m.subject = wanted_subject AND m.state = ANY(wanted_states)
              AND v.search @@ ('''' || replace(replace(terms[i], '\\', '\\\\'), '''', '''''')
                               || '''')::tsquery);
        EXIT WHEN i = cardinality(terms);
        unread := (k1 + 1) * (SELECT sum(w) FROM unnest(weights[i + 1:]) AS w);
        IF cardinality(found) >= wanted THEN
            SELECT scored.score INTO kth
            FROM public.lethe_bm25_scored(found, terms, weights, average, k1, b) scored
            ORDER BY scored.score DESC
            OFFSET wanted - 1 LIMIT 1;
            EXIT WHEN kth >= unread;
        END IF;
    END LOOP;
    RETURN QUERY
        SELECT scored.memory_id, scored.score
        FROM public.lethe_bm25_scored(found, terms, weights, average, k1, b) scored
        ORDER BY scored.score DESC, scored.memory_id
        LIMIT wanted;
END
$$;
"""

# The BM25 scores of these memories' current versions for the weighted terms; each memory
# once, however many terms found it.
SCORED_NAME = "public.lethe_bm25_scored"
SCORED_SIGNATURE = (f"{SCORED_NAME}(uuid[], text[], double precision[], double precision,"
                    " double precision, double precision)")
SCORED_FN = f"""
CREATE FUNCTION {SCORED_NAME}(
    ids uuid[], terms text[], weights double precision[], average double precision,
    k1 double precision, b double precision
)
RETURNS TABLE (memory_id uuid, score double precision)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS
$$
    SELECT m.id, sum(w.weight * h.tf * (k1 + 1)
                     / (h.tf + k1 * (1 - b + b * public.lethe_text_length(v.search) / average)))
    FROM (SELECT DISTINCT unnest(ids) AS id) f
    JOIN public.memory m ON m.id = f.id
    JOIN public.memory_version v ON v.id = m.current_version_id
    CROSS JOIN LATERAL (
        SELECT u.lexeme, coalesce(cardinality(u.positions), 1) AS tf
        FROM unnest(v.search) u WHERE u.lexeme = ANY(terms)
    ) h
    JOIN unnest(terms, weights) AS w(term, weight) ON w.term = h.lexeme
    GROUP BY m.id
$$;
"""


def upgrade() -> None:
    op.add_column("memory", sa.Column("observed_at", sa.DateTime(timezone=True),
                                      server_default=sa.text("now()"), nullable=True))
    op.execute("UPDATE memory SET observed_at = created_at")
    op.alter_column("memory", "observed_at", nullable=False)

    op.create_table(
        "subject_text",
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("memories", sa.BigInteger(), nullable=False),
        sa.Column("length", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "subject", name="pk_subject_text"),
    )
    op.create_table(
        "subject_term",
        sa.Column("tenant_id", sa.Uuid(), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("term", sa.Text(), nullable=False),
        sa.Column("memories", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "subject", "term", name="pk_subject_term"),
    )
    rls.protect("subject_text")
    rls.protect("subject_term")
    op.execute(FUNCTIONS)
    op.execute(TRIGGERS)
    op.execute(BACKFILL)
    op.execute(SCORED_FN)
    op.execute(BM25_FN)
    op.execute(f"REVOKE EXECUTE ON FUNCTION {BM25_SIGNATURE} FROM PUBLIC")


def downgrade() -> None:
    op.execute(f"DROP FUNCTION IF EXISTS {BM25_SIGNATURE}")
    op.execute(f"DROP FUNCTION IF EXISTS {SCORED_SIGNATURE}")
    for trigger, table in (("memory_inserted_text", "memory"), ("memory_updated_text", "memory"),
                           ("memory_deleted_text", "memory"),
                           ("memory_version_updated_text", "memory_version"),
                           ("memory_version_deleted_text", "memory_version")):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
    op.execute("DROP FUNCTION IF EXISTS lethe_memory_inserted_text(), lethe_memory_updated_text(),"
               " lethe_memory_deleted_text(), lethe_version_updated_text(),"
               " lethe_version_deleted_text(),"
               " lethe_count_texts(uuid[], text[], tsvector[], integer[]),"
               " lethe_text_length(tsvector)")
    rls.unprotect("subject_term")
    rls.unprotect("subject_text")
    op.drop_table("subject_term")
    op.drop_table("subject_text")
    op.drop_column("memory", "observed_at")
