"""Migrations build the schema the models describe, and undo it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
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
from app.core.models import import_all_models
from app.core.runtime import get_runtime


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


def test_migrate_is_repeatable(scratch_runtime: Any) -> None:
    migrations.upgrade(scratch_runtime)
    migrations.upgrade(scratch_runtime)  # a second run changes nothing and does not fail
