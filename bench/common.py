"""Plumbing shared by the benchmark scripts: an embedded installation and a live API."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx


def use_data_dir(data_dir: Path) -> None:
    """Point this process (and the API it starts) at an embedded database in ``data_dir``."""
    os.environ.update({"LETHE_DATA_DIR": str(data_dir), "LETHE_ENVIRONMENT": "development",
                       "HF_HUB_OFFLINE": "1"})
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "LETHE_APP_DATABASE_URL"):
        os.environ.pop(name, None)


def create_tenant(name: str) -> tuple[uuid.UUID, str]:
    from app.core import uow
    from app.tenants import service
    from app.tenants.models import Role

    with uow.unit_of_work() as session:
        created = service.create_tenant(session, name=name)
    assert created.keys is not None
    return created.tenant.id, created.keys[Role.app]


@contextmanager
def live_api(runtime: Any, *, pool_size: int = 20, embedding_threads: int = 1
             ) -> Iterator[str]:
    """A `lethe api` process on a free port; yields its base URL."""
    from app.cli import api_command, api_environment

    port = free_port()
    env = {**os.environ, **api_environment(runtime), "LETHE_DB_POOL_SIZE": str(pool_size),
           "LETHE_EMBEDDING_THREADS": str(embedding_threads)}
    server = subprocess.Popen(api_command("127.0.0.1", port), env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base)
        yield base
    finally:
        server.terminate()
        server.wait(30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base: str) -> None:
    deadline = time.monotonic() + 600  # a loaded machine starts the API slowly
    last = ""
    while time.monotonic() < deadline:
        try:
            response = httpx.get(f"{base}/readyz", timeout=30)
            if response.status_code == 200:
                return
            last = response.text
        except httpx.HTTPError as exc:
            last = str(exc)
        time.sleep(0.5)
    raise SystemExit(f"the API did not become ready: {last}")


def percentile(values: list[float], percentile: int) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100)[percentile - 1]


def vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{v:.7g}" for v in vector) + "]"


def one_value(cursor: Any) -> Any:
    """The first column of a statement's one row (a psycopg cursor's)."""
    row = cursor.fetchone()
    assert row is not None
    return row[0]


def take_routed_index(conn: Any) -> str:
    """Drop the HNSW index and return its definition, to build it once after a bulk change:
    far faster than filing each version into it."""
    from app.memories.models import ROUTED_INDEX

    definition = str(one_value(conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (ROUTED_INDEX,))))
    conn.execute(f"DROP INDEX {ROUTED_INDEX}")
    return definition
