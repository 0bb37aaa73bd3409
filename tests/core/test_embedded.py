"""The embedded PostgreSQL sizes its shared buffers for the machine (app/core/embedded.py)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from app.core import embedded


def _shared_buffers(server: embedded.EmbeddedServer) -> int:
    """In MB."""
    with psycopg.connect(server.conninfo()) as conn:
        row = conn.execute("SELECT setting::bigint * current_setting('block_size')::bigint"
                           " / 1048576 FROM pg_settings WHERE name = 'shared_buffers'").fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    if (tmp_path / "pgdata" / "postmaster.pid").exists():
        embedded.EmbeddedServer(pgdata=tmp_path / "pgdata", socket_dir="").stop()


def test_the_default_is_a_quarter_of_the_machine_within_bounds() -> None:
    total_mb = embedded.machine_memory_mb()
    assert 0 < total_mb <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    assert embedded.default_shared_buffers_mb() == max(128, min(4096, total_mb // 4))
    assert 128 <= embedded.default_shared_buffers_mb() <= 4096


def test_a_new_server_gets_its_size_and_keeps_it_across_starts(folder: Path) -> None:
    server = embedded.start(folder)
    assert _shared_buffers(server) == embedded.default_shared_buffers_mb()
    server = embedded.start(folder, shared_buffers_mb=160)
    assert _shared_buffers(server) == 160
    server.stop()
    server = embedded.start(folder, shared_buffers_mb=160)
    assert _shared_buffers(server) == 160


def test_a_server_in_use_is_not_restarted_under_its_clients(
    folder: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    server = embedded.start(folder, shared_buffers_mb=160)
    with psycopg.connect(server.conninfo()) as client:
        with caplog.at_level(logging.WARNING, logger="app.core.embedded"):
            embedded.start(folder, shared_buffers_mb=192)
        assert client.execute("SELECT 1").fetchone() == (1,)  # still connected
        assert _shared_buffers(server) == 160
    assert "applies at its next start" in caplog.text
    server.stop()
    assert _shared_buffers(embedded.start(folder, shared_buffers_mb=192)) == 192


def _overcommit() -> str:
    try:
        return Path("/proc/sys/vm/overcommit_memory").read_text().strip()
    except OSError:
        return "unknown"


@pytest.mark.skipif(_overcommit() not in ("0", "2"),
                    reason="only a kernel that checks overcommit refuses a terabyte mapping")
def test_buffers_the_machine_cannot_give_leave_the_server_as_it_was(
    folder: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A terabyte of shared memory is refused at start: the server comes back with its
    previous setting rather than not at all."""
    server = embedded.start(folder, shared_buffers_mb=160)
    server.stop()
    with caplog.at_level(logging.ERROR, logger="app.core.embedded"):
        server = embedded.start(folder, shared_buffers_mb=1_048_576)
    assert "could not start with shared_buffers" in caplog.text
    assert _shared_buffers(server) == 128  # initdb's, the setting taken out
    with psycopg.connect(server.conninfo()) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_a_container_limit_lowers_the_machine_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    limit = tmp_path / "memory.max"
    limit.write_text(f"{512 * 2**20}\n")
    monkeypatch.setattr(embedded, "CGROUP_LIMITS", (tmp_path / "absent", limit))
    assert embedded.machine_memory_mb() == 512
    assert embedded.default_shared_buffers_mb() == 128
    limit.write_text("max\n")
    assert embedded.machine_memory_mb() == (
        os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20)
