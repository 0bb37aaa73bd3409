"""The processes of an installation: serve (all together), api, worker, beat, migrate."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Annotated

import typer

from app.core import task_metrics
from app.core.config import get_settings
from app.core.runtime import Runtime, get_runtime


def migrate(runtime: Runtime) -> int:
    from app.core import migrations

    print("lethe: migrating database…", flush=True)
    migrations.upgrade(runtime, manage_role=get_settings().app_database_url is None)
    print(f"lethe: schema at {migrations.head_revision()}", flush=True)
    return 0


def child_environment(runtime: Runtime) -> dict[str, str]:
    """What the parts need to reach the same database, broker and secrets as this process."""
    return {
        "DATABASE_URL": runtime.owner_url,
        "LETHE_APP_DATABASE_URL": runtime.app_url,
        "CELERY_BROKER_URL": runtime.broker_url,
        "LETHE_ADMIN_TOKEN": runtime.admin_token,
        "LETHE_SECRET_KEY": runtime.secret_key,
        "LETHE_DATA_DIR": str(get_settings().data_dir.resolve()),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        # Workers embed in batches in their own (prefork) processes: no child of theirs.
        "LETHE_EMBEDDING_PROCESS": "false",
    }


# glibc's allocator, for the API and its embedding process (which inherits the environment):
# at most two arenas instead of eight per core, which the API's forty request threads each
# grew and kept; and a fixed mmap threshold, so the model's large tensors are mapped and
# returned when freed instead of fragmenting the heap as the threshold rose to their size.
# Both grew the resident size for as long as a soak ran (docs/benchmarks.md, "Load and soak").
MALLOC_SETTINGS = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "131072"}


def api_environment(runtime: Runtime) -> dict[str, str]:
    """`child_environment`, with the API's local model in a process of its own unless the
    operator chose otherwise (docs/decisions.md, "The API embeds in a child process"), and
    `MALLOC_SETTINGS` unless the operator set them."""
    return {**child_environment(runtime),
            **{name: os.environ.get(name, value) for name, value in MALLOC_SETTINGS.items()},
            "LETHE_EMBEDDING_PROCESS": os.environ.get("LETHE_EMBEDDING_PROCESS", "true")}


def worker_environment(runtime: Runtime) -> dict[str, str]:
    """`child_environment`, with the folder where pool processes count task outcomes, emptied
    (app/core/task_metrics.py)."""
    return {**child_environment(runtime),
            task_metrics.ENV: str(task_metrics.fresh_directory())}


def api_command(host: str, port: int) -> list[str]:
    # No access log: its line is the raw path and query string (`?subject=`); the app logs
    # each request by its route template instead, and switches uvicorn's off in any case.
    return [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory",
            "--host", host, "--port", str(port), "--no-access-log",
            # Requests the HTTP parser refuses are answered as problem+json too.
            "--http", "app.core.http_protocol:ProblemHTTPProtocol"]


# Worker and beat log JSON lines through app/core/logs.py (Celery's `setup_logging` signal,
# app/core/celery_app.py): no task's arguments, error text or returned text.
def worker_command(concurrency: int) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "worker",
            "--loglevel=INFO", f"--concurrency={concurrency}", "--without-gossip",
            "--without-mingle"]


def beat_command() -> list[str]:
    schedule = get_settings().data_dir.resolve() / "celerybeat-schedule"
    return [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "beat",
            "--loglevel=INFO", f"--schedule={schedule}"]


def serve_parts(runtime: Runtime, host: str, port: int, concurrency: int,
                with_beat: bool) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each part `serve_all` runs: its command and environment."""
    parts = {
        "api": (api_command(host, port), {**os.environ, **api_environment(runtime)}),
        "worker": (worker_command(concurrency), {**os.environ, **worker_environment(runtime)}),
    }
    if with_beat:
        parts["beat"] = (beat_command(), {**os.environ, **child_environment(runtime)})
    return parts


def serve_all(runtime: Runtime, host: str, port: int, concurrency: int,
              with_beat: bool = True) -> int:
    """Run the API, a worker and beat as children; stop them all on Ctrl-C or SIGTERM.

    Without beat for a second machine of one installation: two beats would send each
    periodic job twice (harmless, but twice the work)."""
    migrate(runtime)
    if runtime.generated_admin_token:
        print(f"lethe: admin token: {runtime.admin_token}", flush=True)
        print(f"lethe: (kept in {get_settings().data_dir.resolve() / 'secrets.json'})", flush=True)
    parts = serve_parts(runtime, host, port, concurrency, with_beat)
    # Own sessions: a terminal's Ctrl-C reaches only this supervisor, which stops the
    # children in order instead of letting them race each other down.
    children = {
        name: subprocess.Popen(command, env=part_env, start_new_session=True)
        for name, (command, part_env) in parts.items()
    }
    stopping = False

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    exit_code = 0
    try:
        # Announced only once a request can be answered: uvicorn listens after the model
        # loaded, and a curl in the meantime would be refused.
        if wait_until_listening(host, port, children["api"], lambda: stopping):
            print(f"lethe: serving on http://{host}:{port} (console at /console); "
                  "Ctrl-C stops", flush=True)
        while not stopping:
            for name, child in children.items():
                if child.poll() is not None:
                    print(f"lethe: {name} exited with {child.returncode}; stopping", flush=True)
                    exit_code = 1
                    stopping = True
            time.sleep(0.2)
    finally:
        print("lethe: stopping…", flush=True)
        stop_children(children)
        if runtime.embedded_server is not None:
            runtime.embedded_server.stop()
        print("lethe: stopped", flush=True)
    return exit_code


def wait_until_listening(host: str, port: int, api: subprocess.Popen[bytes],
                        stopped: Callable[[], bool]) -> bool:
    """Whether the API accepts connections on ``port``; False once it exited or the
    supervisor was asked to stop first."""
    # A wildcard address is reached through the loopback of its family.
    address = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    while api.poll() is None and not stopped():
        try:
            socket.create_connection((address, port), timeout=1).close()
        except OSError:
            time.sleep(0.2)
        else:
            return True
    return False


def stop_children(children: dict[str, subprocess.Popen[bytes]], grace: float = 20.0) -> None:
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children.values():
        remaining = max(0.1, deadline - time.monotonic())
        try:
            child.wait(remaining)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


Host = Annotated[str, typer.Option(help="address to listen on")]
Port = Annotated[int, typer.Option(help="port to listen on")]


def register(cli: typer.Typer) -> None:
    @cli.command("serve")
    def serve(host: Host = "127.0.0.1", port: Port = 8000,
              worker_concurrency: Annotated[int, typer.Option()] = 2,
              beat: Annotated[bool, typer.Option(
                  help="also run beat (one per installation)")] = True) -> int:
        """Run API, console, a worker and beat together."""
        return serve_all(get_runtime(), host, port, worker_concurrency, with_beat=beat)

    @cli.command("migrate")
    def migrate_command() -> int:
        """Create roles and run migrations to head."""
        return migrate(get_runtime())

    @cli.command("worker")
    def worker(concurrency: Annotated[int, typer.Option()] = 2) -> int:
        """Run a Celery worker."""
        return run_part(worker_command(concurrency), worker_environment(get_runtime()))

    @cli.command("beat")
    def beat() -> int:
        """Run Celery beat (one per installation)."""
        return run_part(beat_command(), child_environment(get_runtime()))

    @cli.command("api")
    def api(host: Host = "127.0.0.1", port: Port = 8000) -> int:
        """Run only the HTTP API and console."""
        return run_part(api_command(host, port), api_environment(get_runtime()))


def run_part(command: list[str], environment: dict[str, str]) -> int:
    # exec, not a child: signals from the process manager reach uvicorn or Celery directly.
    os.execvpe(command[0], command, {**os.environ, **environment})
    return 0  # pragma: no cover - exec does not return
