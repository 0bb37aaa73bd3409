"""`lethe serve` on the embedded default: one command up, one signal down."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.live_serve import free_port


@pytest.mark.slow
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_serve_runs_everything_says_so_once_reachable_and_stops_cleanly(
    tmp_path: Path, stop_signal: int
) -> None:
    port = free_port()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("LETHE_") and key not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["LETHE_DATA_DIR"] = str(tmp_path / "data")
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    output: list[str] = []
    try:
        token = _wait_for_line(process, output, "lethe: admin token: ").split(": ", 2)[2].strip()
        _wait_for_line(process, output, "lethe: serving on ")
        # At once, no retry: what the line promises is that the port answers now.
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/healthz").status_code == 200
        secrets_file = tmp_path / "data" / "secrets.json"
        assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
        assert json.loads(secrets_file.read_text())["admin_token"] == token
        created = httpx.post(f"{base}/v1/tenants", json={"name": "Acme"},
                             headers={"Authorization": f"Bearer {token}"})
        assert created.status_code == 201
        key = created.json()["api_keys"]["app"]
        app_headers = {"Authorization": f"Bearer {key}"}
        assert httpx.get(f"{base}/v1/settings", headers=app_headers).status_code == 200
        assert httpx.get(f"{base}/console/login").status_code == 200
        # A write and a recall: the API embeds in a child process of its own.
        written = httpx.post(f"{base}/v1/memories", headers=app_headers, timeout=120,
                             json={"subject": "user:1", "text": "I live in Lisbon."})
        assert written.status_code == 201, written.text
        recalled = httpx.post(f"{base}/v1/recall", headers=app_headers, timeout=120,
                              json={"subject": "user:1", "query": "which city is home?"})
        assert recalled.status_code == 200, recalled.text
        assert recalled.json()["results"][0]["memory"]["id"] == written.json()["id"]
        children = psutil.Process(process.pid).children(recursive=True)
        names = " ".join(" ".join(c.cmdline()) for c in children)
        assert "uvicorn" in names and "worker" in names and "beat" in names
        api = next(c for c in children if "uvicorn" in " ".join(c.cmdline()))
        assert any("multiprocessing" in " ".join(c.cmdline()) for c in api.children()), \
            "the API embeds in its own process"
        postgres = [p for p in psutil.process_iter(["cmdline"])
                    if str(tmp_path) in " ".join(p.info["cmdline"] or [])
                    and "postgres" in " ".join(p.info["cmdline"] or [])]
        assert postgres, "the embedded PostgreSQL is not running"
    finally:
        process.send_signal(stop_signal)
        remaining, _ = process.communicate(timeout=60)
        output.append(remaining)
    assert process.returncode == 0, "".join(output)
    assert "lethe: stopped" in "".join(output)
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    for proc in postgres:
        assert not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE


def _wait_for_line(process: subprocess.Popen[str], output: list[str], start: str) -> str:
    """The first line of the process's output that starts with ``start``."""
    assert process.stdout is not None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        output.append(line)
        if line.startswith(start):
            return line
    raise AssertionError(f"no line {start!r} printed:\n" + "".join(output))
