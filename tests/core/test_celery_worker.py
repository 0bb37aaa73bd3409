"""Tasks go through a real Celery worker: embedded broker (PostgreSQL) and Redis."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from celery import Celery

from app.core.runtime import get_runtime

REDIS_URL = os.environ.get("LETHE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _redis_answers() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def worker(broker_url: str, queue: str) -> Iterator[subprocess.Popen[bytes]]:
    runtime = get_runtime()
    env = {
        **os.environ,
        "DATABASE_URL": runtime.owner_url,
        "LETHE_APP_DATABASE_URL": runtime.app_url,
        "CELERY_BROKER_URL": broker_url,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "worker", "--pool=solo",
         "--concurrency=1", "-Q", queue, "--without-gossip", "--without-mingle",
         "--loglevel=WARNING"],
        env=env,
    )
    try:
        yield process
    finally:
        process.terminate()
        process.wait(30)


def _expire_one_record(client: Any, tenant: dict[str, Any], owner_conn: Any) -> None:
    response = client.patch("/v1/settings", json={"detect_forget_requests": True},
                            headers={**tenant["compliance"], "Idempotency-Key": "w"})
    assert response.status_code == 200
    owner_conn.execute("UPDATE operation SET expires_at = now() - interval '1 minute'")


def _wait_until_pruned(owner_conn: Any, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 0:
            return
        assert process.poll() is None, "worker died"
        time.sleep(0.3)
    raise AssertionError("the worker did not run the task")


@pytest.mark.slow
def test_task_runs_on_real_worker_with_embedded_broker(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    runtime = get_runtime()
    assert runtime.broker_url.startswith("sqla+postgresql")
    _expire_one_record(client, tenant, owner_conn)
    queue = f"test-{uuid.uuid4().hex[:8]}"
    with worker(runtime.broker_url, queue) as process:
        from app.idempotency.tasks import prune_operations

        prune_operations.apply_async(queue=queue)
        _wait_until_pruned(owner_conn, process)


@pytest.mark.slow
def test_task_runs_on_real_worker_with_redis_broker(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    if not _redis_answers():
        pytest.skip("no Redis answers at 127.0.0.1:6379; the Redis broker path is untested here")
    _expire_one_record(client, tenant, owner_conn)
    queue = f"test-{uuid.uuid4().hex[:8]}"
    with worker(REDIS_URL, queue) as process:
        sender = Celery("lethe-test-sender", broker=REDIS_URL)
        sender.conf.update(task_serializer="json", accept_content=["json"])
        sender.send_task("idempotency.prune_operations", queue=queue)
        _wait_until_pruned(owner_conn, process)
