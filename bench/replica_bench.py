"""Recall on a streaming replica, behind the forget fence (a script, not a test).

    .venv/bin/python bench/replica_bench.py [--memories 10000] [--subjects 100] [--queries 800]

Seeds an embedded PostgreSQL (as bench/recall_bench.py does), starts a streaming standby of it
from the same binaries (bench/standby.py), then measures recall throughput at concurrency 8
through a live `lethe api`, hybrid and keyword-only: the primary alone; the standby serving
recall with the fence; the same without the fence (`LETHE_REPLICA_FENCE=false`). Then the
fence itself, in this process: the time `app.core.replicas.choose` takes per recall with the
fence (one round trip to the primary, one to the replica) and without it (the replica's
round trip only, which also checks it is still a standby).

On one machine the primary and the standby share its cores, so the replica adds no capacity
here; what the figures show is what routing and the fence cost a recall.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sqlalchemy.engine import make_url

from bench import standby as standbys
from bench.common import create_tenant, live_api, percentile, use_data_dir
from bench.recall_bench import CORPORA, _Recaller, _seed

CONCURRENCY = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--queries", type=int, default=800, help="recalls per measurement")
    parser.add_argument("--fence-calls", type=int, default=2_000)
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="lethe-replica-bench-"))
    use_data_dir(data_dir)
    os.environ["LETHE_EMBEDDING_THREADS"] = "2"  # seeding; the API embeds with one
    from app.core import migrations
    from app.core.runtime import get_runtime
    from app.embeddings.runtime import embedder

    runtime = get_runtime()
    assert runtime.embedded_server is not None
    migrations.upgrade(runtime)
    owner = runtime.owner_url.replace("postgresql+psycopg://", "postgresql://")
    tenant_id, app_key = create_tenant("Replica bench")
    corpus = CORPORA["templated"]
    print(f"seeding {args.memories:,} memories over {args.subjects:,} subjects…", flush=True)
    _seed(owner, tenant_id, corpus.texts(args.memories), args.memories, args.subjects,
          embedder().embed)
    os.environ.pop("LETHE_EMBEDDING_THREADS")

    standby = standbys.create(runtime.embedded_server, "0")
    try:
        standby.wait_until_replayed(owner, timeout=300)
        replica_url = standby.url(make_url(runtime.app_url).database or "lethe",
                                  runtime.app_role, runtime.app_password)
        asks = [(f"user:{i % args.subjects:05d}", corpus.queries[i % len(corpus.queries)])
                for i in range(args.queries)]
        headers = {"Authorization": f"Bearer {app_key}"}
        rows = []
        for label, env in (("primary alone", {}),
                           ("one replica, fence on", {"LETHE_READ_DATABASE_URLS": replica_url}),
                           ("one replica, fence off", {"LETHE_READ_DATABASE_URLS": replica_url,
                                                       "LETHE_REPLICA_FENCE": "false"})):
            with _environment(env), live_api(runtime) as base:
                for mode in ("hybrid", "keyword"):
                    rows.append((label, mode, *_throughput(base, headers, asks, mode)))
        print("\n| reads served by | mode | recalls/s at c=8 | p50 ms | p95 ms |")
        print("|---|---|---:|---:|---:|")
        for label, mode, rate, p50, p95 in rows:
            print(f"| {label} | {mode} | {rate:.0f} | {p50:.1f} | {p95:.1f} |")
        _fence_cost(tenant_id, replica_url, args.fence_calls)
    finally:
        standbys.remove(standby)
        runtime.embedded_server.stop()


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _throughput(base: str, headers: dict[str, str], asks: list[tuple[str, str]],
                mode: str) -> tuple[float, float, float]:
    """Recalls a second at `CONCURRENCY`, and the p50 and p95 latency, after a warm-up."""
    def share(part: list[tuple[str, str]]) -> list[float]:
        with _Recaller(base, headers) as recaller:
            return [recaller.recall({"subject": subject, "query": query, "mode": mode})
                    for subject, query in part]

    def recalls() -> list[float]:
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            return [t for times in pool.map(share, [asks[i::CONCURRENCY]
                                                    for i in range(CONCURRENCY)])
                    for t in times]

    recalls()
    started = time.perf_counter()
    times = recalls()
    elapsed = time.perf_counter() - started
    return len(times) / elapsed, percentile(times, 50), percentile(times, 95)


def _fence_cost(tenant_id: uuid.UUID, replica_url: str, calls: int) -> None:
    """Microseconds `replicas.choose` takes a recall, with the fence and without it, timed
    in alternating blocks of 50 so that the machine's slow spells weigh on both alike."""
    from app.core import db, replicas
    from app.core.config import get_settings

    times: dict[str, list[float]] = {"true": [], "false": []}
    with _environment({"LETHE_READ_DATABASE_URLS": replica_url}):
        db.dispose_engines()
        for block in range(max(1, calls // 50) + 1):
            for fence in times:
                os.environ["LETHE_REPLICA_FENCE"] = fence
                get_settings.cache_clear()
                for _ in range(50):
                    started = time.perf_counter()
                    assert replicas.choose(tenant_id) is not None
                    if block:  # the first block warms the pools up
                        times[fence].append((time.perf_counter() - started) * 1e6)
        os.environ.pop("LETHE_REPLICA_FENCE")
    print("\n| routing step | per recall, µs (median) | p95 |")
    print("|---|---:|---:|")
    for label, fence in (("fence on: primary + replica round trips", "true"),
                         ("fence off: replica round trip only", "false")):
        print(f"| {label} | {percentile(times[fence], 50):.0f} | "
              f"{percentile(times[fence], 95):.0f} |")
    db.dispose_engines()
    get_settings.cache_clear()


if __name__ == "__main__":
    main()
