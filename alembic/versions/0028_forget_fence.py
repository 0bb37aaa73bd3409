"""The forget fence: a per-tenant counter every removal from recall raises, in its own
transaction, so a recall served by a streaming replica can tell whether that replica has
replayed the tenant's last forget (app/core/replicas.py).

Revision ID: 0028_forget_fence
Revises: 0027_sealed_content
Create Date: 2026-12-04
"""

from collections.abc import Sequence

from alembic import op

from app.core import rls

revision: str = "0028_forget_fence"
down_revision: str | None = "0027_sealed_content"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Raised once per transaction (the `xact` column), however many memories it removes: an
# erasure batch of thousands writes one row version, not thousands. Runs with the owner's
# rights (the application may only read the fence), and raises it whatever tenant context the
# change runs in.
RAISE_FN = """
CREATE OR REPLACE FUNCTION lethe_raise_forget_fence() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO forget_fence AS f (tenant_id, generation, xact)
    VALUES (OLD.tenant_id, 1, pg_current_xact_id()::text::bigint)
    ON CONFLICT (tenant_id) DO UPDATE SET generation = f.generation + 1, xact = EXCLUDED.xact
    WHERE f.xact <> EXCLUDED.xact;
    RETURN NULL;
END $$;
"""

LIVE = "('active', 'suspect')"


def upgrade() -> None:
    op.execute("""
        CREATE TABLE forget_fence (
            tenant_id uuid NOT NULL,
            generation bigint NOT NULL,
            xact bigint NOT NULL,
            CONSTRAINT pk_forget_fence PRIMARY KEY (tenant_id)
        )""")
    # Forced like every tenant-owned table: the application reads its tenant's row only. The
    # trigger's function runs as the owner (this migration's role), whom a policy of its own
    # lets raise any tenant's row, in whatever tenant context the forget runs.
    rls.protect("forget_fence")
    op.execute("CREATE POLICY forget_fence_raise ON forget_fence TO CURRENT_USER "
               "USING (true) WITH CHECK (true)")
    op.execute(RAISE_FN)
    op.execute("REVOKE ALL ON FUNCTION lethe_raise_forget_fence() FROM PUBLIC")
    # What removes a memory, or some of its text, from what recall and the API show, whichever
    # path does it: leaving the live states (forget, erasure, quarantine, retention,
    # supersession: recall returns live memories only), becoming forgotten from any state
    # (recall shows deprecated ones as history, the API lists quarantined ones), a new current
    # version (a strike, an edit), or the row going.
    op.execute(f"""
        CREATE TRIGGER memory_forget_fence AFTER UPDATE OF state ON memory FOR EACH ROW
        WHEN ((OLD.state IN {LIVE} AND NEW.state NOT IN {LIVE})
              OR (NEW.state = 'forgotten' AND OLD.state <> 'forgotten'))
        EXECUTE FUNCTION lethe_raise_forget_fence()""")
    op.execute("""
        CREATE TRIGGER memory_forget_fence_version AFTER UPDATE OF current_version_id ON memory
        FOR EACH ROW WHEN (OLD.state <> 'forgotten' AND OLD.current_version_id IS NOT NULL
                           AND OLD.current_version_id IS DISTINCT FROM NEW.current_version_id)
        EXECUTE FUNCTION lethe_raise_forget_fence()""")
    op.execute("""
        CREATE TRIGGER memory_forget_fence_delete AFTER DELETE ON memory FOR EACH ROW
        WHEN (OLD.state <> 'forgotten')
        EXECUTE FUNCTION lethe_raise_forget_fence()""")


def downgrade() -> None:
    for trigger in ("memory_forget_fence", "memory_forget_fence_version",
                    "memory_forget_fence_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger} ON memory")
    op.execute("DROP FUNCTION IF EXISTS lethe_raise_forget_fence()")
    op.execute("DROP TABLE IF EXISTS forget_fence")
