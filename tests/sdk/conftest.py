"""A live `lethe serve` (API, worker, beat) on the test database, for the SDK to talk to."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_TOKEN


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def server(database: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of `lethe serve` on a free port; stopped at the end of the run."""
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    folder = tmp_path_factory.mktemp("sdk-serve")
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": runtime.owner_url,
           "LETHE_APP_DATABASE_URL": runtime.app_url, "LETHE_DATA_DIR": str(folder / "data")}
    (folder / "data").mkdir()
    log = folder / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port),
             "--worker-concurrency", "1"],
            env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_ready(base, process, log)
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_ready(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError("lethe serve did not become ready:\n" + log.read_text())


@pytest.fixture
def keys(server: str) -> dict[str, Any]:
    """A new tenant made through the SDK with the admin token: its ID and both keys."""
    from lethe_client import Lethe

    with Lethe(server, ADMIN_TOKEN) as admin:
        created = admin.tenants.create("SDK tenant")
    assert created.api_keys is not None
    return {"id": created.id, "app": created.api_keys.app,
            "compliance": created.api_keys.compliance}


class Recorder:
    """httpx event hooks that note each answer's status and the Idempotency-Key sent."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int, str | None]] = []

    def hooks(self) -> dict[str, list[Any]]:
        return {"response": [self.note]}

    def note(self, response: httpx.Response) -> None:
        request = response.request
        self.seen.append((request.method, request.url.path, response.status_code,
                          request.headers.get("idempotency-key")))

    async def anote(self, response: httpx.Response) -> None:
        self.note(response)
