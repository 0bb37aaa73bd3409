"""Migrations build the schema the models describe, and undo it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from psycopg import sql
from sqlalchemy import create_engine, pool, text
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

from app.core import migrations
from app.core.runtime import get_runtime
from app.tables import import_all_models
from tests.keys.helpers import own_key_store


@pytest.fixture
def scratch_runtime(database: dict[str, Any]) -> Iterator[Any]:
    name = f"lethe_mig_{uuid.uuid4().hex[:8]}"
    admin = make_url(database["url"]).set(drivername="postgresql", database="postgres")
    with psycopg.connect(admin.render_as_string(False), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    runtime = get_runtime()
    owner = make_url(runtime.owner_url).set(database=name).render_as_string(False)
    app = make_url(runtime.app_url).set(database=name).render_as_string(False)
    yield replace(runtime, owner_url=owner, app_url=app)
    with psycopg.connect(admin.render_as_string(False), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def test_upgrade_downgrade_upgrade(scratch_runtime: Any) -> None:
    migrations.upgrade(scratch_runtime)
    engine = create_engine(scratch_runtime.owner_url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            config = migrations.alembic_config()
            config.attributes["connection"] = conn
            command.downgrade(config, "base")
            left = conn.execute(text(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename <> 'alembic_version'"
            )).scalar()
            assert left == 0
        migrations.upgrade(scratch_runtime)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == (
                migrations.head_revision()
            )
    finally:
        engine.dispose()


def test_models_match_migrated_schema(scratch_runtime: Any) -> None:
    migrations.upgrade(scratch_runtime)
    import_all_models()
    engine = create_engine(scratch_runtime.owner_url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": False}
            )
            diff = compare_metadata(context, SQLModel.metadata)
    finally:
        engine.dispose()
    assert diff == [], diff


def test_autogenerate_leaves_the_lists_index_to_beat(scratch_runtime: Any) -> None:
    """The lists index is built by beat, not by a migration (app/recall/vector_lists.py):
    comparing models with a database that has it finds nothing to drop, as alembic's
    environment compares."""
    from app.recall import vector_lists

    migrations.upgrade(scratch_runtime)
    import_all_models()
    engine = create_engine(scratch_runtime.owner_url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            driver = conn.connection.driver_connection
            assert driver is not None
            driver.execute(vector_lists.definition(vector_lists.INDEX, 1))
            conn.commit()
            filters: list[dict[str, Any]] = [{}, {"include_object": vector_lists.include_object}]
            diffs = [compare_metadata(MigrationContext.configure(conn, opts={
                "compare_type": True, "compare_server_default": False, **extra}),
                SQLModel.metadata) for extra in filters]
            driver.execute(f"DROP INDEX {vector_lists.INDEX}")
            conn.commit()
    finally:
        engine.dispose()
    assert [d[0] for d in diffs[0]] == ["remove_index"]  # what autogenerate would have done
    assert diffs[1] == []


def test_migrate_is_repeatable(scratch_runtime: Any) -> None:
    migrations.upgrade(scratch_runtime)
    migrations.upgrade(scratch_runtime)  # a second run changes nothing and does not fail


def test_state_changed_at_is_backfilled_by_an_owner_bound_by_row_security(
    scratch_runtime: Any,
) -> None:
    """0006 backfills from `updated_at` when the migrating owner is no superuser (production):
    FORCE row-level security would otherwise hide every row from its UPDATE."""
    migrations.upgrade(scratch_runtime, revision="0005_dependencies")
    role = f"lethe_owner_{uuid.uuid4().hex[:8]}"
    tenant_id = uuid.uuid4()
    engine = create_engine(scratch_runtime.owner_url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO tenant (id, name) VALUES (:id, 'T')"),
                         {"id": tenant_id})
            for days in (3, 40):
                conn.execute(text(
                    "INSERT INTO memory (id, tenant_id, subject, volatility, state, revision,"
                    " updated_at) VALUES (gen_random_uuid(), :t, 's', 'preferential',"
                    " 'deprecated', 2, now() - make_interval(days => :days))"),
                    {"t": tenant_id, "days": days})
        with engine.begin() as conn:  # after the inserts' deferred foreign-key checks ran
            conn.execute(text(f'CREATE ROLE "{role}" NOLOGIN'))
            for table in ("memory", "operation"):
                conn.execute(text(f'ALTER TABLE {table} OWNER TO "{role}"'))
            conn.execute(text(f'GRANT USAGE, CREATE ON SCHEMA public TO "{role}"'))
            conn.execute(text(f'GRANT SELECT, UPDATE ON alembic_version TO "{role}"'))
            conn.execute(text(f'SET ROLE "{role}"'))
            config = migrations.alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "0006_retention")
            conn.execute(text("RESET ROLE"))
            rows = conn.execute(text(
                "SELECT state_changed_at = updated_at FROM memory")).scalars().all()
            assert rows == [True, True]
            forced = conn.execute(text(
                "SELECT relforcerowsecurity FROM pg_class WHERE relname = 'memory'")).scalar()
            assert forced is True
            conn.execute(text(f'REASSIGN OWNED BY "{role}" TO CURRENT_USER'))
            conn.execute(text(f'DROP OWNED BY "{role}"'))
    finally:
        with engine.begin() as conn:
            conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
        engine.dispose()


def test_tenant_keys_move_into_the_key_store_unchanged_and_back(
    scratch_runtime: Any, tmp_path: Path
) -> None:
    """0026: every digest already kept must still match, so the key moves as it is; the
    column goes, so a dump of the table holds no key."""
    import secrets

    from app.keys import subjects, tenant_keys

    migrations.upgrade(scratch_runtime, revision="0025_console_session_generation")
    tenant_id, key = uuid.uuid4(), secrets.token_bytes(32)
    engine = create_engine(scratch_runtime.owner_url, poolclass=pool.NullPool)
    with own_key_store(tmp_path / "keys") as store:
        try:
            with engine.begin() as conn:
                conn.execute(text(
                    "INSERT INTO tenant (id, name, digest_key) VALUES (:id, 'T', :k)"),
                    {"id": tenant_id, "k": key})
            migrations.upgrade(scratch_runtime)
            assert tenant_keys.tenant_key(tenant_id) == key
            with engine.connect() as conn:
                columns = conn.execute(text(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = 'tenant'"
                )).scalars().all()
            assert "digest_key" not in columns
            migrations.upgrade(scratch_runtime)  # again: nothing to move, nothing fails

            with engine.begin() as conn:
                config = migrations.alembic_config()
                config.attributes["connection"] = conn
                command.downgrade(config, "0025_console_session_generation")
                back = conn.execute(text("SELECT digest_key FROM tenant")).scalar()
            assert bytes(back) == key

            # A store that holds another key for the tenant is not this database's: refused.
            subjects.forget_cached()
            for entry in store.rglob("tenant.key"):
                entry.unlink()
            tenant_keys.create_tenant_key(tenant_id, secrets.token_bytes(32))
            with pytest.raises(RuntimeError, match="another key"):
                migrations.upgrade(scratch_runtime)
        finally:
            engine.dispose()
