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
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
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
