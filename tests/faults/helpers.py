"""Real processes for the fault scenarios: an API (`lethe api`), Celery workers and beats,
a Redis of the test's own on a free port, and the waits around them.

Every process here is started by the test and stopped by its own PID; none of the machine's
services is touched."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ADMIN_TOKEN

PROBLEM = "application/problem+json"
# The shared worker's webhook settings (tests/faults/conftest.py): one attempt's timeout and
# the waits before each retry, short so a test sees a delivery fail for good in seconds.
WEBHOOK_TIMEOUT, WEBHOOK_WAITS = 2.0, [3.0, 3.0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], Any], *, timeout: float, what: str,
               log: Path | None = None, interval: float = 0.2) -> Any:
    """``check()``'s first truthy answer within ``timeout`` seconds (errors count as no)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with suppress(httpx.HTTPError, OSError):
            answer = check()
            if answer:
                return answer
        time.sleep(interval)
    tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
    raise AssertionError(f"{what} within {timeout} s\n{tail}")


def lethe_env(**values: str) -> dict[str, str]:
    """This test run's environment for a child process, with ``values`` on top."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **values}


def stop(process: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """Stop a process this test started: SIGTERM to it (a worker then stops its own pool),
    SIGKILL to its whole process group if it has not gone within ``grace`` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(grace)


def spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        # A process group of its own, so `stop` reaches its children and nothing else.
        return subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)


@dataclass
class Api:
    """`lethe api` as a real process: uvicorn with the HTTP protocol it serves in production."""

    process: subprocess.Popen[bytes]
    base: str
    log: Path

    def client(self, timeout: float = 60.0) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=timeout)

    def tenant(self) -> dict[str, Any]:
        created = httpx.post(f"{self.base}/v1/tenants", json={"name": "Faults"}, timeout=60,
                             headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert created.status_code == 201, created.text
        keys = created.json()["api_keys"]
        return {"id": created.json()["id"],
                "app": {"Authorization": f"Bearer {keys['app']}"},
                "compliance": {"Authorization": f"Bearer {keys['compliance']}"}}


@contextmanager
def api(env: dict[str, str], folder: Path) -> Iterator[Api]:
    """The API on a free port, up (its model loaded) before this yields."""
    port = free_port()
    log = folder / "api.log"
    process = spawn([sys.executable, "-m", "app.cli", "api", "--port", str(port)],
                    {**env, "LETHE_EMBEDDING_PROCESS": "false"}, log)
    served = Api(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_until(lambda: process.poll() is None
                   and httpx.get(f"{served.base}/healthz", timeout=5).status_code == 200,
                   timeout=180, what="the API did not come up", log=log)
        yield served
    finally:
        stop(process)


def celery_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "app.core.celery_app", *args]


@contextmanager
def worker(env: dict[str, str], log: Path, *, concurrency: int = 1) -> Iterator[
        subprocess.Popen[bytes]]:
    """A prefork worker: a pool child killed mid-task is WorkerLostError, and the message it
    held goes back to the queue (`task_reject_on_worker_lost`)."""
    process = spawn(celery_command("worker", "--pool=prefork", f"--concurrency={concurrency}",
                                   "-Q", "celery", "--without-gossip", "--without-mingle",
                                   "--without-heartbeat", "--loglevel=INFO"), env, log)
    try:
        wait_until(lambda: process.poll() is None and b"ready." in log.read_bytes(),
                   timeout=180, what="the worker did not start", log=log)
        yield process
    finally:
        stop(process)


@contextmanager
def beat(env: dict[str, str], folder: Path, name: str) -> Iterator[subprocess.Popen[bytes]]:
    log = folder / f"{name}.log"
    process = spawn(celery_command("beat", "--loglevel=INFO",
                                   f"--schedule={folder / (name + '-schedule')}"), env, log)
    try:
        wait_until(lambda: process.poll() is None and b"beat: Starting" in log.read_bytes(),
                   timeout=120, what=f"{name} did not start", log=log)
        yield process
    finally:
        stop(process)


def sender_of(pid: int, port: int) -> int:
    """The pool process of worker ``pid`` whose TCP connection has local port ``port``."""
    import psutil

    for child in pool_children(pid):
        with suppress(psutil.NoSuchProcess):
            if any(c.laddr and c.laddr.port == port
                   for c in psutil.Process(child).net_connections(kind="tcp")):
                return child
    raise AssertionError(f"no pool process of {pid} holds port {port}")


def pool_children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


@dataclass
class Redis:
    """A redis-server of the test's own on a free port, stopped and started at will."""

    port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert self.process is None or self.process.poll() is not None
        # Append-only file: a restart keeps what was queued, as a production Redis would.
        self.process = spawn(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.folder), "--appendonly", "yes", "--appendfsync", "always",
             "--save", ""], os.environ.copy(), self.folder / "redis.log")
        wait_until(self.answers, timeout=30, what="redis did not start")

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


@contextmanager
def redis_server(folder: Path) -> Iterator[Redis]:
    if shutil.which("redis-server") is None:
        import pytest

        pytest.skip("redis-server is not installed")
    server = Redis(free_port(), folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def assert_unavailable(response: httpx.Response) -> None:
    """A 503 problem+json that says when to come back."""
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    assert int(response.headers["retry-after"]) >= 1
    body = response.json()
    assert body["status"] == 503 and body["type"].endswith("/service-unavailable"), body


def delivery_of(client: Any, tenant: dict[str, Any], hook_id: str) -> dict[str, Any]:
    """The one delivery of the webhook ``hook_id``, as the API lists it."""
    (logged,) = client.get(f"/v1/webhooks/{hook_id}/deliveries",
                           headers=tenant["compliance"]).json()["data"]
    assert isinstance(logged, dict)
    return logged
