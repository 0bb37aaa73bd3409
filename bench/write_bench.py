"""Write-path benchmark on the embedded PostgreSQL (a script, not a test).

    .venv/bin/python bench/write_bench.py [--facts 10000] [--users 100] [--singles 300]
    .venv/bin/python bench/write_bench.py --profile 200   # the in-process write and forget

Side by side in one run, against one `lethe api` process:
(a) import throughput: `--facts` facts in `POST /v1/memories/batch` requests of 100, each
    batch beside the same 100 texts embedded raw in this process by the same model with the
    same threads (`embed`, one call per 100: the model's own batched throughput);
(b) single writes at concurrency 1 (`POST /v1/memories`), each beside one raw query
    embedding of the same text in this process;
(c) forgets at concurrency 1 (`DELETE /v1/memories/{id}`, the plain forget) of those writes.
`--profile N` instead times N writes and N forgets in process (no HTTP), counts their SQL
statements and prints the cProfile entries that cost most.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

import httpx

from bench.common import create_tenant, live_api, percentile, use_data_dir
from bench.synthetic import memory_texts

BATCH = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=10_000, help="facts imported in batches")
    parser.add_argument("--users", type=int, default=100, help="subjects the facts are about")
    parser.add_argument("--singles", type=int, default=300, help="single writes, then forgets")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads, for the API's model and the raw one alike")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile N in-process writes and forgets instead")
    args = parser.parse_args()

    use_data_dir(Path(tempfile.mkdtemp(prefix="lethe-write-bench-")))
    os.environ["LETHE_EMBEDDING_THREADS"] = str(args.threads)
    from app.core import migrations
    from app.core.runtime import get_runtime
    from app.embeddings.runtime import embedder

    runtime = get_runtime()
    migrations.upgrade(runtime)
    tenant_id, key = create_tenant("Write bench")
    model = embedder()
    model.embed(["warm up the model"] * 4)
    try:
        if args.profile:
            _profile(tenant_id, args.profile, args.users)
            return
        with live_api(runtime, embedding_threads=args.threads) as base, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {key}"},
                timeout=300) as client:
            _report(args, *_measure(client, model, args))
    finally:
        if runtime.embedded_server is not None:
            runtime.embedded_server.stop()


def _measure(client: httpx.Client, model: Any, args: argparse.Namespace) -> tuple[Any, ...]:
    texts = list(memory_texts(args.facts + args.singles, seed=11))
    facts, singles = texts[:args.facts], texts[args.facts:]
    print(f"importing {len(facts)} facts in batches of {BATCH}…", flush=True)
    raw_s = import_s = 0.0
    for start in range(0, len(facts), BATCH):
        chunk = facts[start:start + BATCH]
        started = time.perf_counter()
        model.embed(chunk)
        raw_s += time.perf_counter() - started
        started = time.perf_counter()
        response = client.post("/v1/memories/batch", json={"memories": [
            {"subject": f"user:{(start + i) % args.users}", "text": text}
            for i, text in enumerate(chunk)]})
        import_s += time.perf_counter() - started
        assert response.status_code == 200, response.text
        assert all(r["status"] in (200, 201) for r in response.json()["results"])
    print(f"{len(singles)} single writes and forgets…", flush=True)
    embed_ms, write_ms, ids = [], [], []
    for index, text in enumerate(singles):
        started = time.perf_counter()
        model.embed_one(text)
        embed_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        response = client.post("/v1/memories", json={
            "subject": f"user:{index % args.users}", "text": text,
            "source": f"conversation:{index}"})
        write_ms.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    forget_ms = []
    for memory_id in ids:
        started = time.perf_counter()
        response = client.delete(f"/v1/memories/{memory_id}")
        forget_ms.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 204, response.text
    return len(facts), raw_s, import_s, embed_ms, write_ms, forget_ms


def _report(args: argparse.Namespace, facts: int, raw_s: float, import_s: float,
            embed_ms: list[float], write_ms: list[float], forget_ms: list[float]) -> None:
    raw, imported = facts / raw_s, facts / import_s
    embed50, write50 = percentile(embed_ms, 50), percentile(write_ms, 50)
    print()
    print(f"{facts:,} facts, {args.users} subjects, {args.threads} torch thread(s)")
    print()
    print("| measure | value | target |")
    print("|---|---|---|")
    print(f"| raw batched MiniLM, texts/s | {raw:.0f} | |")
    print(f"| batch import, memories/s | {imported:.0f} | |")
    print(f"| import ÷ raw | {imported / raw:.2f} | ≥ 0.8: {_yes(imported >= 0.8 * raw)} |")
    print(f"| query embedding p50 / p95 ms | {embed50:.1f} / {percentile(embed_ms, 95):.1f} | |")
    print(f"| single write (c=1) p50 / p95 ms | {write50:.1f} / "
          f"{percentile(write_ms, 95):.1f} | |")
    print(f"| single write p50 - query embedding p50, ms | {write50 - embed50:.1f} | "
          f"≤ 10: {_yes(write50 - embed50 <= 10)} |")
    forget50 = percentile(forget_ms, 50)
    print(f"| forget (DELETE, c=1) p50 / p95 ms | {forget50:.1f} / "
          f"{percentile(forget_ms, 95):.1f} | ≤ 10: {_yes(forget50 <= 10)} |")


def _yes(met: bool) -> str:
    return "yes" if met else "no"


def _profile(tenant_id: Any, count: int, users: int) -> None:
    """Time, count and profile the write and forget services in process (no HTTP)."""
    from sqlalchemy import event

    from app.core import db, uow
    from app.forgetting.forget import forget_memory
    from app.forgetting.forget_requests import prepare, remember
    from app.memories.schemas import MemoryCreate

    statements: list[str] = []
    event.listen(db.app_engine(), "before_cursor_execute",
                 lambda *a: statements.append(str(a[2]).split()[0]))
    texts = list(memory_texts(count, seed=13))
    bodies = [MemoryCreate(subject=f"user:{i % users}", text=t, source=f"conversation:{i}")
              for i, t in enumerate(texts)]
    ids: list[Any] = []

    def writes() -> Iterator[None]:
        for body in bodies:
            prepared = prepare(tenant_id=tenant_id, body=body, actor="system:bench")
            with uow.unit_of_work(tenant_id) as session:
                written = remember(session, tenant_id=tenant_id, prepared=prepared,
                                   actor="system:bench", memory_id=None)
                ids.append(getattr(written, "memory").id)  # noqa: B009 (typed as a union)
            yield

    def forgets() -> Iterator[None]:
        for memory_id in ids:
            with uow.unit_of_work(tenant_id) as session:
                forget_memory(session, tenant_id=tenant_id, memory_id=memory_id, delete=True,
                              exclude_source=True, about=None, reason="delete",
                              actor="system:bench", require_source=False)
            yield

    for name, steps in (("write", writes), ("forget", forgets)):
        statements.clear()
        with _profiled(name) as times:
            for _ in steps():
                times.append(time.perf_counter())
        print(f"{name}: {len(statements) / count:.1f} statements each "
              f"({_kinds(statements, count)})")


def _kinds(statements: list[str], count: int) -> str:
    kinds: dict[str, int] = {}
    for verb in statements:
        kinds[verb] = kinds.get(verb, 0) + 1
    return ", ".join(f"{verb} {n / count:.1f}" for verb, n in sorted(kinds.items()))


@contextmanager
def _profiled(name: str) -> Iterator[list[float]]:
    times = [time.perf_counter()]
    profile = cProfile.Profile()
    profile.enable()
    yield times
    profile.disable()
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(times)]
    print(f"\n{name}: p50 {percentile(gaps, 50):.1f} ms, p95 {percentile(gaps, 95):.1f} ms "
          "(in process, profiled)")
    pstats.Stats(profile).sort_stats("cumulative").print_stats(r"app/", 25)


if __name__ == "__main__":
    main()
