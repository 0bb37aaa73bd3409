"""A one-off command on the embedded default (`lethe migrate`, `doctor`, `tenants list`) stops
the PostgreSQL it started, and leaves running one it found running (under `lethe serve`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from app.core import embedded


def _lethe(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("LETHE_") and key not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["LETHE_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def _postgres(pgdata: Path) -> list[psutil.Process]:
    """The server processes of ``pgdata`` (the postmaster names it on its command line)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "postgres" in cmdline and str(pgdata) in cmdline:
            found.append(process)
    return found


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    """A fresh data folder; whatever server the test left on it is stopped."""
    yield tmp_path / "data"
    if (tmp_path / "data" / "pgdata" / "postmaster.pid").exists():
        embedded.EmbeddedServer(pgdata=tmp_path / "data" / "pgdata", socket_dir="").stop()


@pytest.mark.slow
def test_one_off_commands_stop_the_database_they_started_and_leave_a_running_one(
    data: Path,
) -> None:
    pgdata = data.resolve() / "pgdata"
    for command in (["migrate"], ["tenants", "list"], ["doctor", "--min-free-gb", "0"]):
        done = _lethe(data, *command)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not (pgdata / "postmaster.pid").exists(), command
        assert not _postgres(pgdata), command
    embedded.start(data)  # as `lethe serve` leaves it while it runs
    postmaster = (pgdata / "postmaster.pid").read_text().splitlines()[0]
    done = _lethe(data, "tenants", "list")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (pgdata / "postmaster.pid").read_text().splitlines()[0] == postmaster
    assert psutil.pid_exists(int(postmaster)) and _postgres(pgdata)
