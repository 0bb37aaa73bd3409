"""`lethe serve` as a real process for the tests that talk to it over HTTP: a free port, the
wait until it is ready, and a stop that always ends it."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_ready(base: str, process: subprocess.Popen[Any], log: Path) -> None:
    """Until `/readyz` answers 200 (its model loaded); fails with the log if it never does."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"lethe serve at {base} did not become ready:\n" + log.read_text())


def stop(process: subprocess.Popen[Any]) -> None:
    """SIGTERM (`serve` stops its parts in order), SIGKILL if it has not gone in a minute."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
