"""The `lethe` command: serve, migrate, worker, beat, openapi, staff, receipts."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import FrameType

from app.core import task_metrics
from app.core.config import get_settings
from app.core.runtime import Runtime, get_runtime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lethe", description="Lethe memory service.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run API, console, a worker and beat together")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--worker-concurrency", type=int, default=2)
    sub.add_parser("migrate", help="create roles and run migrations to head")
    sub.add_parser("vector-lists", help="build the IVFFlat index large subjects' recall walks, "
                   "if the table's size calls for it (beat checks hourly)")
    worker = sub.add_parser("worker", help="run a Celery worker")
    worker.add_argument("--concurrency", type=int, default=2)
    sub.add_parser("beat", help="run Celery beat (one per installation)")
    api = sub.add_parser("api", help="run only the HTTP API and console")
    api.add_argument("--host", default="127.0.0.1")
    api.add_argument("--port", type=int, default=8000)
    openapi = sub.add_parser("openapi", help="write the OpenAPI document")
    openapi.add_argument("--output", type=Path, default=Path("openapi/openapi.json"))
    staff = sub.add_parser("staff", help="manage a tenant's console staff")
    staff_sub = staff.add_subparsers(dest="staff_command", required=True)
    staff_create = staff_sub.add_parser(
        "create", help="add a staff member; without --password one is generated and printed once")
    staff_create.add_argument("--tenant", required=True, help="the tenant's ID")
    staff_create.add_argument("--email", required=True)
    staff_create.add_argument("--role", required=True, choices=["officer", "viewer"])
    staff_create.add_argument("--password", default=None,
                              help="at least 12 characters (visible in the process list)")
    receipts = sub.add_parser("receipts", help="work with signed compliance receipts")
    receipts_sub = receipts.add_subparsers(dest="receipts_command", required=True)
    verify = receipts_sub.add_parser(
        "verify", help="verify a receipt file offline; exit 0 when it verifies, 1 when not")
    verify.add_argument("file", type=Path, help="a receipt (or an erasure request holding one)")
    verify.add_argument("--key", help="the public JWK (a file, or its JSON) from "
                        "GET /v1/receipts/public-key; default: this data folder's key")
    args = parser.parse_args(argv)

    if args.command == "openapi":
        return write_openapi(args.output)
    if args.command == "receipts":
        return verify_receipt(args.file, args.key)
    runtime = get_runtime()
    if args.command == "migrate":
        return migrate(runtime)
    if args.command == "staff":
        return create_staff(args.tenant, args.email, args.role, args.password)
    if args.command == "vector-lists":
        return vector_lists()
    if args.command == "serve":
        return serve_all(runtime, args.host, args.port, args.worker_concurrency)
    environment = child_environment(runtime)
    if args.command == "worker":
        command = worker_command(args.concurrency)
        environment = worker_environment(runtime)
    elif args.command == "beat":
        command = beat_command()
    else:
        command = api_command(args.host, args.port)
        environment = api_environment(runtime)
    # exec, not a child: signals from the process manager reach uvicorn or Celery directly.
    os.execvpe(command[0], command, {**os.environ, **environment})
    return 0  # pragma: no cover - exec does not return


def migrate(runtime: Runtime) -> int:
    from app.core import migrations

    print("lethe: migrating database…", flush=True)
    migrations.upgrade(runtime, manage_role=get_settings().app_database_url is None)
    print(f"lethe: schema at {migrations.head_revision()}", flush=True)
    return 0


def create_staff(tenant: str, email: str, role: str, password: str | None) -> int:
    """`lethe staff create`: what `POST /v1/staff` does, for the installation's operator."""
    from pydantic import ValidationError

    from app.audit import service as audit
    from app.core import uow
    from app.core.errors import LetheError
    from app.staff import service as staff
    from app.staff.schemas import StaffCreate
    from app.tenants import service as tenants

    try:
        tenant_id = uuid.UUID(tenant)
        body = StaffCreate.model_validate({"email": email, "role": role, "password": password})
    except ValueError as error:
        problems = (error.errors() if isinstance(error, ValidationError)
                    else [{"loc": ("tenant",), "msg": "not a UUID"}])
        for problem in problems:
            where = ".".join(str(part) for part in problem["loc"])
            print(f"lethe: {where}: {problem['msg']}", file=sys.stderr)
        return 2
    prepared = staff.prepare_password(body.password)
    try:
        with uow.unit_of_work(tenant_id) as session:
            if not tenants.exists(session, tenant_id=tenant_id):
                print(f"lethe: no tenant {tenant_id}", file=sys.stderr)
                return 1
            member = staff.create(session, tenant_id=tenant_id, email=body.email,
                                  role=body.role, prepared=prepared, actor=audit.ADMIN)
    except LetheError as error:
        print(f"lethe: {error.detail}", file=sys.stderr)
        return 1
    print(f"lethe: staff member {member.id} ({member.email}, {member.role.value}) created",
          flush=True)
    if prepared.generated is not None:
        print(f"lethe: password (shown once): {prepared.generated}", flush=True)
    return 0


def vector_lists() -> int:
    from app.core import db
    from app.recall import vector_lists

    print("lethe: checking the vector lists index (a build takes seconds per 100,000 "
          "versions)…", flush=True)
    with db.autocommit(owner=True) as conn:
        driver = db.driver_connection(conn)
        built = vector_lists.ensure(driver)
        lists = vector_lists.current_lists(driver)
    if built is not None:
        why = {"new": "there was none", "size": f"it had {built.replaced} lists",
               "churn": "a tenth as many versions were written since it was built as it held"}
        print(f"lethe: built with {built.lists} lists over {built.versions:,} versions"
              f" ({why.get(built.reason, built.reason)})", flush=True)
    elif lists is None:
        print(f"lethe: no index: fewer than {vector_lists.min_versions():,} versions, or "
              "another process is building it", flush=True)
    else:
        print(f"lethe: the index has {lists} lists, which suits the table", flush=True)
    return 0


def write_openapi(output: Path) -> int:
    from app.main import create_app

    document = create_app().openapi()
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    print(f"lethe: wrote {output}", flush=True)
    return 0


def verify_receipt(path: Path, key: str | None) -> int:
    from app.receipts import offline

    verdict = offline.verify_file(path, key)
    print(f"{'OK' if verdict.ok else 'FAILED'}: {verdict.reason}", flush=True)
    return 0 if verdict.ok else 1


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


def api_environment(runtime: Runtime) -> dict[str, str]:
    """`child_environment`, with the API's local model in a process of its own unless the
    operator chose otherwise (docs/decisions.md, "The API embeds in a child process")."""
    return {**child_environment(runtime),
            "LETHE_EMBEDDING_PROCESS": os.environ.get("LETHE_EMBEDDING_PROCESS", "true")}


def worker_environment(runtime: Runtime) -> dict[str, str]:
    """`child_environment`, with the folder where pool processes count task outcomes, emptied
    (app/core/task_metrics.py)."""
    return {**child_environment(runtime),
            task_metrics.ENV: str(task_metrics.fresh_directory())}


def api_command(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory",
            "--host", host, "--port", str(port), "--no-access-log",
            # Requests the HTTP parser refuses are answered as problem+json too.
            "--http", "app.core.http_protocol:ProblemHTTPProtocol"]


def worker_command(concurrency: int) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "worker",
            "--loglevel=INFO", f"--concurrency={concurrency}", "--without-gossip",
            "--without-mingle"]


def beat_command() -> list[str]:
    schedule = get_settings().data_dir.resolve() / "celerybeat-schedule"
    return [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "beat",
            "--loglevel=INFO", f"--schedule={schedule}"]


def serve_all(runtime: Runtime, host: str, port: int, concurrency: int) -> int:
    """Run the API, a worker and beat as children; stop them all on Ctrl-C or SIGTERM."""
    migrate(runtime)
    if runtime.generated_admin_token:
        print(f"lethe: admin token: {runtime.admin_token}", flush=True)
        print(f"lethe: (kept in {get_settings().data_dir.resolve() / 'secrets.json'})", flush=True)
    env = {**os.environ, **child_environment(runtime)}
    parts = {
        "api": (api_command(host, port), {**os.environ, **api_environment(runtime)}),
        "worker": (worker_command(concurrency), {**os.environ, **worker_environment(runtime)}),
        "beat": (beat_command(), env),
    }
    # Own sessions: a terminal's Ctrl-C reaches only this supervisor, which stops the
    # children in order instead of letting them race each other down.
    children = {
        name: subprocess.Popen(command, env=part_env, start_new_session=True)
        for name, (command, part_env) in parts.items()
    }
    print(f"lethe: serving on http://{host}:{port} (console at /console); Ctrl-C stops",
          flush=True)
    stopping = False

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    exit_code = 0
    try:
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


if __name__ == "__main__":
    sys.exit(main())
