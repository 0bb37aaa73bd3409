"""A streaming standby of an embedded PostgreSQL, from the same binaries (the replica tests
and `bench/replica_bench.py`):
`pg_basebackup -R` over the primary's Unix socket, started on a socket of its own."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pgserver
import psycopg
from psycopg import sql

from app.core.embedded import EmbeddedServer


def bin_path(name: str) -> str:
    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


def _run_as(user: str | None) -> dict[str, Any]:
    return {"user": user} if user else {}


@dataclass
class Standby:
    pgdata: Path
    socket_dir: str
    user: str | None

    def conninfo(self, database: str) -> str:
        return f"dbname={database} user=postgres host={self.socket_dir}"

    def url(self, database: str, user: str, password: str) -> str:
        return f"postgresql://{user}:{password}@/{database}?host={self.socket_dir}"

    def pg_ctl(self, *args: str) -> None:
        subprocess.run([bin_path("pg_ctl"), "-D", str(self.pgdata), "-w", *args], check=True,
                       capture_output=True, timeout=60, **_run_as(self.user))

    def start(self) -> None:
        self.pg_ctl("-o", f"-h '' -k {self.socket_dir}", "-l", str(self.pgdata / "standby.log"),
                    "start")

    def stop(self) -> None:
        self.pg_ctl("-m", "immediate", "stop")

    def running(self) -> bool:
        return (self.pgdata / "postmaster.pid").exists()

    def set_apply_delay(self, delay: str) -> None:
        """`recovery_min_apply_delay`, reloaded: the replay waiting on a commit rereads it."""
        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER SYSTEM SET recovery_min_apply_delay = {}").format(
                sql.Literal(delay)))
            conn.execute("SELECT pg_reload_conf()")

    def wait_until_replayed(self, primary: str, timeout: float = 30.0) -> None:
        """Until the standby has replayed everything the primary wrote so far."""
        with psycopg.connect(primary, autocommit=True) as conn:
            row = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        assert row is not None
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as conn:
            while True:
                done = conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                                    (row[0],)).fetchone()
                if done and done[0]:
                    return
                assert time.monotonic() < deadline, "the standby did not catch up"
                time.sleep(0.05)


def create(server: EmbeddedServer, apply_delay: str) -> Standby:
    """Take a base backup of ``server`` and start it as a standby replaying with
    ``apply_delay``. The embedded server already allows it: `wal_level` replica and
    `max_wal_senders` are PostgreSQL's defaults, and pgserver's initdb trusts local
    replication connections."""
    user = server.system_user()
    folder = Path(tempfile.mkdtemp(prefix="lethe-sb-"))
    pgdata, socket_dir = folder / "pgdata", folder / "socket"
    socket_dir.mkdir()
    if user:
        shutil.chown(folder, user)
        shutil.chown(socket_dir, user)
    subprocess.run([bin_path("pg_basebackup"), "-D", str(pgdata), "-R", "-X", "stream",
                    "-c", "fast", "-h", server.socket_dir, "-U", "postgres"],
                   check=True, capture_output=True, timeout=120, **_run_as(user))
    with (pgdata / "postgresql.auto.conf").open("a") as conf:
        conf.write(f"recovery_min_apply_delay = '{apply_delay}'\n"
                   "shared_buffers = '128MB'\nhot_standby = on\n")
    os.chmod(pgdata, 0o700)
    standby = Standby(pgdata=pgdata, socket_dir=str(socket_dir), user=user)
    standby.start()
    return standby


def remove(standby: Standby) -> None:
    if standby.running():
        with contextlib.suppress(subprocess.CalledProcessError):
            standby.stop()
    shutil.rmtree(standby.pgdata.parent, ignore_errors=True)
