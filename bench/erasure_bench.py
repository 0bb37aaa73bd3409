"""Erasure benchmark on the embedded PostgreSQL (a script, not a test).

    .venv/bin/python bench/erasure_bench.py [--memories 10000] [--versions 3] [--derived 10000]
        [--artifacts 1000] [--background 20000] [--broker embedded|redis] [--profile]

Seeds a subject with ``--memories`` memories of ``--versions`` versions each, ``--derived``
memories of other subjects derived from them, ``--artifacts`` artifacts derived from them and
``--background`` memories of other subjects; registers a webhook whose local receiver answers
200 to each `artifact.erase_requested` (acknowledging it); runs a worker (`lethe worker`) and
the API; files the erasure and reports the time from the request to `awaiting_artifacts`
(the cascade), to `completed` (every artifact acknowledged) and to `vacuumed_at`.
``--profile`` runs the cascade in this process under cProfile instead (no worker, no
artifacts' wait) and prints where its time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import psycopg

from bench.common import create_tenant, live_api, use_data_dir
from bench.erased_subject import seed

SUBJECT = "bench:subject"
REDIS = "redis://127.0.0.1:6379/9"


class _Acknowledging(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--derived", type=int, default=10_000)
    parser.add_argument("--artifacts", type=int, default=1_000)
    parser.add_argument("--background", type=int, default=20_000)
    parser.add_argument("--broker", choices=("embedded", "redis"), default="embedded")
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="lethe-erasure-bench-"))
    use_data_dir(data_dir)
    os.environ["LETHE_WEBHOOKS_ALLOW_PRIVATE"] = "true"
    if args.broker == "redis":
        import redis

        redis.Redis.from_url(REDIS).flushdb()
        os.environ["CELERY_BROKER_URL"] = REDIS
    from app.core import migrations
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    tenant_id, app_key = create_tenant("Erasure bench")
    try:
        with psycopg.connect(runtime.owner_url.replace("+psycopg", ""), autocommit=True) as conn:
            print(f"seeding {args.memories}x{args.versions} memories, {args.derived} derived, "
                  f"{args.artifacts} artifacts, {args.background} background…", flush=True)
            started = time.perf_counter()
            seed(conn, tenant_id=tenant_id, subject=SUBJECT, memories=args.memories,
                 versions=args.versions, derived=args.derived, artifacts=args.artifacts,
                 background=args.background, word="Benchmark")
            conn.execute("VACUUM ANALYZE")
            print(f"seeded in {time.perf_counter() - started:.1f} s", flush=True)
        if args.profile:
            _profile(tenant_id)
        else:
            _timed(runtime, tenant_id, app_key, args)
    finally:
        if runtime.embedded_server is not None:
            runtime.embedded_server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def _timed(runtime: Any, tenant_id: Any, app_key: str, args: argparse.Namespace) -> None:
    from app.cli import child_environment, worker_command

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Acknowledging)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, **child_environment(runtime)}
    worker: subprocess.Popen[bytes] | None = None
    try:
        with live_api(runtime) as base, httpx.Client(base_url=base, timeout=120) as api:
            worker = subprocess.Popen(worker_command(args.worker_concurrency), env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            compliance = _compliance_key(tenant_id)
            hook = api.post("/v1/webhooks", headers=compliance, json={
                "url": f"http://127.0.0.1:{server.server_port}/hook",
                "events": ["artifact.erase_requested"]})
            assert hook.status_code == 201, hook.text
            time.sleep(30)  # the worker's pool loads the embedding model meanwhile
            started = time.perf_counter()
            filed = api.post("/v1/erasure-requests", json={"subject": SUBJECT},
                             headers={"Authorization": f"Bearer {app_key}"}).json()
            marks: dict[str, float] = {}
            body: dict[str, Any] = {}
            while True:
                body = api.get(f"/v1/erasure-requests/{filed['id']}", headers=compliance).json()
                now = time.perf_counter() - started
                marks.setdefault(body["status"], now)
                if body["status"] == "failed":
                    raise SystemExit(f"the erasure failed: {body['error']}")
                if body["status"] == "completed" and body["vacuumed_at"]:
                    marks["vacuumed"] = now
                    break
                if now > 1800:
                    raise SystemExit(f"not done after 30 minutes: {body['status']}")
                time.sleep(0.1)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(60)
        server.shutdown()
    cascade = marks.get("awaiting_artifacts", marks["completed"])
    counts = body["receipt"]["counts"]
    print()
    print("| broker | memories x versions | derived | artifacts | cascade (request → "
          "awaiting_artifacts) | request → completed | request → vacuumed |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {args.broker} | {counts['memories']} x {args.versions} | "
          f"{counts['derived_memories']} | {counts['artifacts']} | {cascade:.1f} s | "
          f"{marks['completed']:.1f} s | {marks['vacuumed']:.1f} s |")


def _compliance_key(tenant_id: Any) -> dict[str, str]:
    from app.core import uow
    from app.tenants import key_store
    from app.tenants.models import Role

    with uow.unit_of_work(tenant_id) as session:
        _row, raw = key_store.add(session, tenant_id=tenant_id, role=Role.compliance)
    return {"Authorization": f"Bearer {raw}"}


def _profile(tenant_id: Any) -> None:
    from app.core import uow
    from app.erasure import service, tasks
    from app.erasure.schemas import ErasureRequestCreate

    with uow.unit_of_work(tenant_id) as session:
        filed, _ = service.file(session, tenant_id=tenant_id,
                                body=ErasureRequestCreate(subject=SUBJECT),
                                actor="system:bench")
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    outcome = tasks.run(str(filed.id), str(tenant_id))
    profiler.disable()
    print(f"cascade in process: {outcome} in {time.perf_counter() - started:.1f} s")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)


if __name__ == "__main__":
    main()
