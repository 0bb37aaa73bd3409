"""Task outcomes counted by a real prefork worker (`lethe worker`) show on the API's
`/metrics` and on the worker's own metrics port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.cli import worker_environment
from app.core import task_metrics
from app.core.celery_app import celery_app
from app.core.config import get_settings
from app.core.runtime import get_runtime

TASK = "idempotency.prune_operations"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _outcomes(text: str) -> dict[tuple[str, str], float]:
    return {(s.labels["task"], s.labels["outcome"]): s.value
            for family in text_string_to_metric_families(text) for s in family.samples
            if s.name == "lethe_task_outcomes_total"}


def _wait_for(check: Callable[[], bool], worker: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert worker.poll() is None, "the worker died"
        try:
            if check():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError("the outcomes never showed")


def test_a_worker_counts_in_the_folder_the_api_reads_emptied_at_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    folder = tmp_path / "task-metrics"
    folder.mkdir()
    (folder / "counter_4242.db").write_bytes(b"left by a worker that is gone")
    monkeypatch.setenv("LETHE_TASK_METRICS_DIR", str(folder))
    get_settings.cache_clear()
    try:
        environment = worker_environment(get_runtime())
        assert environment[task_metrics.ENV] == str(folder.resolve())
        assert task_metrics.directory() == folder.resolve()
        assert list(folder.iterdir()) == []
    finally:
        get_settings.cache_clear()


@pytest.mark.slow
def test_a_succeeded_and_a_failed_task_are_counted_by_name(
    client: Any, admin_headers: dict[str, str]
) -> None:
    port = _free_port()
    worker = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "worker", "--concurrency", "1"],
        env={**os.environ, "LETHE_WORKER_METRICS_PORT": str(port)})
    try:
        celery_app.send_task(TASK)
        # Called with an argument it does not take: the task raises.
        celery_app.send_task(TASK, args=["unexpected"])

        def api_counts() -> bool:
            text = client.get("/metrics", headers=admin_headers).text
            counts = _outcomes(text)
            return counts.get((TASK, "succeeded")) == 1 and counts.get((TASK, "failed")) == 1

        _wait_for(api_counts, worker)
        served = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        assert _outcomes(served)[(TASK, "succeeded")] == 1
        assert _outcomes(served)[(TASK, "failed")] == 1
    finally:
        worker.terminate()
        worker.wait(60)
