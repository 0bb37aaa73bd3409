"""`lethe doctor`: is this installation able to run? Each check prints ok or FAIL with its
detail; the exit code is 1 when any failed, so a deployment script can gate on it."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from typing import Annotated

import psycopg
import typer
from sqlalchemy.engine import make_url

from app.core.runtime import Runtime, get_runtime

Check = Callable[[Runtime], str]


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def database(runtime: Runtime) -> str:
    with psycopg.connect(_libpq(runtime.owner_url), connect_timeout=5) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    assert row is not None
    return f"reachable, PostgreSQL {row[0]}"


def pgvector(runtime: Runtime) -> str:
    with psycopg.connect(_libpq(runtime.owner_url), connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        raise RuntimeError("the vector extension is not installed (run `lethe migrate`)")
    return f"pgvector {row[0]}"


def migrations_current(runtime: Runtime) -> str:
    from app.core import migrations

    head = migrations.head_revision()
    with psycopg.connect(_libpq(runtime.owner_url), connect_timeout=5) as conn:
        try:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    current = row[0] if row else None
    if current != head:
        raise RuntimeError(f"schema at {current}, code expects {head} (run `lethe migrate`)")
    return f"schema at {head}"


def broker(runtime: Runtime) -> str:
    from kombu import Connection

    with Connection(runtime.broker_url, connect_timeout=5) as connection:
        connection.ensure_connection(max_retries=1, timeout=5)
        transport = connection.transport_cls
    return f"reachable ({transport})"


def model(_runtime: Runtime) -> str:
    # Offline: a deployment must not need a model hub at run time.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["LETHE_EMBEDDING_PROCESS"] = "false"
    from app.core.config import get_settings
    from app.embeddings import runtime as embeddings

    get_settings.cache_clear()
    started = time.monotonic()
    vector = embeddings.embedder().embed(["lethe doctor"])[0]
    return f"loads offline, {len(vector)} dimensions in {time.monotonic() - started:.1f} s"


def key_store(runtime: Runtime) -> str:
    """The store is readable and private, and holds the key of every tenant in the database
    (a store that lost one, or the wrong `LETHE_KEY_STORE`, answers every request 503)."""
    from app.keys.configured import key_store as configured
    from app.keys.store import TENANT_ENTRY

    store = configured()
    summary = store.check()
    with psycopg.connect(_libpq(runtime.owner_url), connect_timeout=5) as conn:
        tenants = [row[0] for row in conn.execute("SELECT id FROM tenant").fetchall()]
    missing = [tenant for tenant in tenants if not store.present(tenant, TENANT_ENTRY)]
    if missing:
        raise RuntimeError(f"{len(missing)} of {len(tenants)} tenants have no key in the "
                           f"{store.describe()}: is LETHE_KEY_STORE right?")
    return f"{summary}, every tenant's key present"


def disk(min_free_gb: float) -> Check:
    def check(_runtime: Runtime) -> str:
        from app.core.config import get_settings

        folder = get_settings().data_dir.resolve()
        probe = folder if folder.exists() else folder.parent
        free = shutil.disk_usage(probe).free / 2**30
        if free < min_free_gb:
            raise RuntimeError(f"{free:.1f} GiB free under {folder}, under {min_free_gb} GiB")
        return f"{free:.1f} GiB free under the data folder"
    return check


def run(checks: dict[str, Check]) -> int:
    failed = 0
    try:
        runtime = get_runtime()
    except Exception as error:
        print(f"FAIL  database: {error}", flush=True)
        return 1
    for name, check in checks.items():
        try:
            detail = check(runtime)
        except Exception as error:
            failed += 1
            print(f"FAIL  {name}: {error}", flush=True)
        else:
            print(f"ok    {name}: {detail}", flush=True)
    return 1 if failed else 0


def register(cli: typer.Typer) -> None:
    @cli.command("doctor")
    def doctor(
        min_free_gb: Annotated[float, typer.Option(help="free disk the data folder needs")] = 1.0,
    ) -> int:
        """Check the database, pgvector, migrations, broker, key store, model and disk."""
        return run({"database": database, "pgvector": pgvector,
                    "migrations": migrations_current, "broker": broker,
                    "key store": key_store, "model": model, "disk": disk(min_free_gb)})
