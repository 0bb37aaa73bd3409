"""Schema migrations and the database roles, run as the owner (`lethe migrate`)."""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from psycopg import sql
from sqlalchemy import Connection, create_engine, pool, text

from app.core.runtime import Runtime

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
MIGRATION_LOCK = 0x4C45_5448  # arbitrary constant: one migrator at a time per database
KEYWORD_MATCHES = "public.lethe_keyword_matches(text, text[], tsquery[], integer)"
BM25 = "public.lethe_bm25(text, text[], text[], integer, double precision, double precision)"


def alembic_config() -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    return config


@lru_cache
def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


# Revisions that leave the old plaintext of rows they sealed in dead tuples of these tables.
# A rewrite in the migration's own transaction must keep them (that transaction deleted
# them, and could still roll back), so the tables are rewritten once it has committed.
REWRITTEN_AFTER = {
    "0027_sealed_content": (
        "memory", "memory_version", "retraction", "subject_term", "subject_text"),
    "0030_digested_subjects": (
        "memory", "memory_version", "provenance_edge", "retraction", "legal_hold",
        "access_export", "erasure_request", "source_exclusion", "subject_text",
        "subject_term", "operation"),
}


def upgrade(runtime: Runtime, *, manage_role: bool = True, revision: str = "head") -> None:
    """Ensure the application role, migrate to ``revision`` and grant what the role needs;
    then rewrite the tables a revision it applied names in `REWRITTEN_AFTER`."""
    engine = create_engine(runtime.owner_url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
            if manage_role:
                ensure_app_role(conn, runtime.app_role, runtime.app_password)
            config = alembic_config()
            config.attributes["connection"] = conn
            before = MigrationContext.configure(conn).get_current_revision()
            command.upgrade(config, revision)
            after = MigrationContext.configure(conn).get_current_revision()
            grant_app_role(conn, runtime.app_role)
        tables = _rewritten(config, before, after)
        if tables:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                log.info("Rewriting %s (their pages held plaintext)", ", ".join(tables))
                conn.exec_driver_sql(f"VACUUM (FULL) {', '.join(tables)}")
    finally:
        engine.dispose()


def _rewritten(config: Config, before: str | None, after: str | None) -> list[str]:
    """The tables `REWRITTEN_AFTER` names for the revisions applied from ``before`` to
    ``after`` (none from an empty database: it had nothing in clear)."""
    if before is None or after is None or before == after:
        return []
    applied = ScriptDirectory.from_config(config).iterate_revisions(after, before)
    return list(dict.fromkeys(table for script in applied
                              for table in REWRITTEN_AFTER.get(script.revision, ())))


def ensure_app_role(conn: Connection, role: str, password: str) -> None:
    """Create or update the login role the application connects as.

    It is deliberately not the owner, not a superuser and not BYPASSRLS: row-level security
    must bind it.
    """
    raw = conn.connection.dbapi_connection
    assert raw is not None
    exists = conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first()
    verb = "ALTER" if exists else "CREATE"
    statement = sql.SQL(
        "{} ROLE {} LOGIN PASSWORD {} NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE"
    ).format(sql.SQL(verb), sql.Identifier(role), sql.Literal(password))
    conn.exec_driver_sql(statement.as_string(raw))  # type: ignore[arg-type]
    check_app_role(conn, role)


def check_app_role(conn: Connection, role: str) -> None:
    row = conn.execute(
        text("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = :r"), {"r": role}
    ).first()
    if row is None:
        raise RuntimeError(f"database role {role!r} does not exist; create it or let Lethe")
    if row[0] or row[1]:
        raise RuntimeError(f"database role {role!r} must be neither superuser nor BYPASSRLS")


def grant_app_role(conn: Connection, role: str) -> None:
    raw = conn.connection.dbapi_connection
    assert raw is not None
    ident = sql.Identifier(role).as_string(raw)  # type: ignore[arg-type]
    database = conn.execute(text("SELECT current_database()")).scalar_one()
    db_ident = sql.Identifier(database).as_string(raw)  # type: ignore[arg-type]
    for statement in (
        f"GRANT CONNECT ON DATABASE {db_ident} TO {ident}",
        f"GRANT USAGE ON SCHEMA public TO {ident}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {ident}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {ident}",
        f"REVOKE INSERT, UPDATE, DELETE ON alembic_version FROM {ident}",
    ):
        conn.exec_driver_sql(statement)
    if conn.execute(text("SELECT to_regclass('audit_event')")).scalar() is not None:
        # Append-only for the application; the trigger refuses changes from anyone else.
        conn.exec_driver_sql(f"REVOKE UPDATE, TRUNCATE ON audit_event FROM {ident}")
    if conn.execute(text("SELECT to_regclass('forget_fence')")).scalar() is not None:
        # Read-only for the application: only the trigger (the owner's rights) raises it.
        conn.exec_driver_sql(f"REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON forget_fence "
                             f"FROM {ident}")
    for function in (KEYWORD_MATCHES, BM25):
        found = conn.execute(text("SELECT to_regprocedure(:f)"), {"f": function}).scalar()
        if found is not None:
            # Runs with the owner's rights (migrations 0010, 0011, 0021): PUBLIC may not, the
            # application may.
            conn.exec_driver_sql(f"GRANT EXECUTE ON FUNCTION {function} TO {ident}")
    check_app_role(conn, role)
