"""Forgetting-ladder jobs at scale on the embedded PostgreSQL (a script, not a test).

    .venv/bin/python bench/ladder_bench.py [--memories 100000] [--dependents 10000]
                                           [--subjects 1000] [--skip-consolidation]

Every job gets a tenant of its own, seeded with COPY, and runs in this process through the
code beat runs (`app.maintenance.tasks`, batched) and, beside it, as one transaction (for
comparison; POST /v1/maintenance/{job} runs the same batches as beat):

- decay over N active memories: none due (the scan alone), then all due (every row moves);
- retention over N memories: deprecated → quarantined, then quarantined → forgotten (purge),
  beside `--operations` stored answers of other writes (each forget redacts among them);
- dependency invalidation: N memories, `--dependents` of them depending on product.version
  4.1, which changes to 4.2;
- consolidation over N memories of `--subjects` subjects with paraphrased near-duplicates,
  real MiniLM embeddings (cached under `--cache-dir`), run last and skipped with a message
  while `app.forgetting.consolidation` does not exist yet.

Decay, retention and invalidation never read embeddings, so their rows carry none.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg

from bench import sealed
from bench.common import create_tenant, one_value, take_routed_index, use_data_dir, vector_literal
from bench.synthetic import memory_texts, subject_memories

NOW = datetime.now(UTC)


@dataclass
class Seed:
    subject: str
    text: str
    state: str = "active"
    volatility: str = "preferential"
    depends_on: dict[str, str] | None = None
    embedding: Sequence[float] | None = None
    age_days: float = 0.0  # last_validated_at and state_changed_at this far back
    id: uuid.UUID | None = None


@dataclass
class Row:
    job: str
    path: str
    changed: int
    seconds: float

    def line(self) -> str:
        rate = f"{self.changed / self.seconds:,.0f}" if self.changed else "-"
        return f"| {self.job} | {self.path} | {self.changed:,} | {self.seconds:.2f} | {rate} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--dependents", type=int, default=10_000)
    parser.add_argument("--operations", type=int, default=100_000,
                        help="stored answers (idempotency records) of other writes beside "
                        "the retention tenants' memories: every forget redacts among them")
    parser.add_argument("--subjects", type=int, default=1_000)
    parser.add_argument("--duplicate-share", type=float, default=0.1,
                        help="share of each subject's memories that paraphrase another")
    parser.add_argument("--only", nargs="*", default=None,
                        choices=["decay", "retention", "invalidation", "consolidation"])
    parser.add_argument("--skip-consolidation", action="store_true")
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "lethe-bench-cache",
                        help="embeddings of the consolidation texts, reused between runs")
    args = parser.parse_args()
    only = set(args.only or ["decay", "retention", "invalidation", "consolidation"])
    if args.skip_consolidation:
        only.discard("consolidation")

    data_dir = Path(tempfile.mkdtemp(prefix="lethe-ladder-bench-"))
    use_data_dir(data_dir)
    os.environ["LETHE_EMBEDDING_THREADS"] = "2"  # bulk embedding in a process of its own
    from app.core import migrations
    from app.core.config import get_settings
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    owner = runtime.owner_url.replace("postgresql+psycopg://", "postgresql://")
    print(f"embedded database in {data_dir}; batch size "
          f"{get_settings().maintenance_batch_size}", flush=True)
    rows: list[Row] = []
    try:
        if "decay" in only:
            rows += _decay(owner, args.memories)
        if "retention" in only:
            rows += _retention(owner, args.memories, args.operations)
        if "invalidation" in only:
            rows += _invalidation(owner, args.memories, args.dependents)
        if "consolidation" in only:
            rows += _consolidation(owner, args)
    finally:
        if runtime.embedded_server is not None:
            runtime.embedded_server.stop()
    print()
    print("| job | path | rows changed | seconds | rows changed/s |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(row.line())


# -- the jobs ---------------------------------------------------------------------------------

def _decay(owner: str, count: int) -> list[Row]:
    from app.core import uow
    from app.forgetting import batches, decay, tasks

    batched, one_tx = _tenant("ladder decay beat"), _tenant("ladder decay one-tx")
    for tenant_id in (batched, one_tx):
        _seed(owner, tenant_id, (Seed(f"user:{i % 1000:05d}", text)
                                 for i, text in enumerate(memory_texts(count))))
    def beat() -> int:
        return tasks.run_for_tenant(batches.decay_batch, batched, now=_now())

    rows = [_timed("decay, none due", "beat", beat, count)]
    _age(owner, batched, "last_validated_at", days=400)
    rows.append(_timed("decay, all due", "beat",
                       beat, count))
    _age(owner, one_tx, "last_validated_at", days=400)

    def one_transaction() -> int:
        with uow.unit_of_work(one_tx) as session:
            return len(decay.decay(session, tenant_id=one_tx, now=_now()))

    rows.append(_timed("decay, all due", "one transaction", one_transaction, count))
    return rows


def _retention(owner: str, count: int, operations: int) -> list[Row]:
    from app.core import uow
    from app.forgetting import batches, retention, tasks

    batched, one_tx = _tenant("ladder retention beat"), _tenant("ladder retention one-tx")
    for tenant_id in (batched, one_tx):
        _seed(owner, tenant_id, (Seed(f"user:{i % 1000:05d}", text, state="deprecated",
                                      age_days=31)
                                 for i, text in enumerate(memory_texts(count))))
        _seed_operations(owner, tenant_id, operations)

    def one_transaction() -> int:
        with uow.unit_of_work(one_tx) as session:
            moved = retention.retention(session, tenant_id=one_tx, now=_now())
        return sum(len(ids) for ids in moved.values())

    def beat() -> int:
        return tasks.run_for_tenant(batches.retention_batch, batched, now=_now())

    rows = [
        _timed("retention, deprecated → quarantined", "beat", beat, count),
        _timed("retention, deprecated → quarantined", "one transaction", one_transaction,
               count),
    ]
    _age(owner, batched, "state_changed_at", days=31)
    _age(owner, one_tx, "state_changed_at", days=31)
    rows.append(_timed("retention, quarantined → forgotten (purged)", "beat", beat, count))
    rows.append(_timed("retention, quarantined → forgotten (purged)", "one transaction",
                       one_transaction, count))
    return rows


def _invalidation(owner: str, count: int, dependents: int) -> list[Row]:
    from app.core import uow
    from app.invalidation import service as dependencies
    from app.invalidation import tasks as dependency_tasks

    tenant_id = _tenant("ladder invalidation")
    with uow.unit_of_work(tenant_id) as session:
        dependencies.put(session, tenant_id=tenant_id, key="product.version", value="4.1")
    every = max(1, count // max(1, dependents))
    _seed(owner, tenant_id, (
        Seed(f"user:{i % 1000:05d}", text,
             depends_on={"product.version": "4.1"} if i % every == 0 and i // every < dependents
             else None)
        for i, text in enumerate(memory_texts(count))))
    with uow.unit_of_work(tenant_id) as session:
        _, operation = dependencies.put(session, tenant_id=tenant_id, key="product.version",
                                        value="4.2")
        assert operation is not None
        operation_id = operation.id

    def run() -> int:
        dependency_tasks.invalidate.run(str(operation_id), str(tenant_id))
        return _count(owner, tenant_id, "flags ? 'dependency-changed'")

    return [_timed(f"invalidation, {dependents:,} dependents of {count:,}", "task", run,
                   dependents)]


def _consolidation(owner: str, args: argparse.Namespace) -> list[Row]:
    try:
        module = importlib.import_module("app.forgetting.consolidation")
    except ModuleNotFoundError:
        print("consolidation: app/forgetting/consolidation.py does not exist yet; skipped")
        return []
    consolidate = getattr(module, "consolidate", None)
    if consolidate is None:
        print("consolidation: app.forgetting.consolidation has no `consolidate`; skipped")
        return []
    from app.core import uow

    per_subject = max(1, args.memories // args.subjects)
    seeded = list(subject_memories(args.subjects, per_subject,
                                   duplicate_share=args.duplicate_share))
    vectors = _embeddings([text for _, text, _ in seeded], args.cache_dir)
    tenant_id = _tenant("ladder consolidation")
    ids = [uuid.uuid4() for _ in seeded]
    _seed(owner, tenant_id, (Seed(f"user:{subject:05d}", text, embedding=vector, id=memory_id)
                             for (subject, text, _), vector, memory_id
                             in zip(seeded, vectors, ids, strict=True)), hnsw=True)
    fact = {memory_id: (subject, stated) for memory_id, (subject, _, stated)
            in zip(ids, seeded, strict=True)}
    duplicates = len(seeded) - len(set(fact.values()))
    paraphrases = sum(1 for _, text, stated in seeded if text != stated)
    print(f"consolidation: {len(seeded):,} memories, {duplicates:,} restate another memory of "
          f"their subject ({paraphrases:,} paraphrases, the rest exact repeats)", flush=True)
    try:  # the beat path (one transaction per subject) once it exists
        per_tenant = importlib.import_module("app.forgetting.tasks").consolidate_tenant
        path = "beat"
    except (ModuleNotFoundError, AttributeError):
        per_tenant, path = None, "one call"

    def run() -> int:
        before = _snapshot(owner, tenant_id)
        if per_tenant is not None:
            per_tenant(tenant_id)
        else:
            with uow.unit_of_work(tenant_id) as session:
                consolidate(session, tenant_id=tenant_id, subject=None)
        return _changed_since(owner, tenant_id, before)

    name = f"consolidation, {args.subjects:,} subjects"
    rows = [_timed(name, path, run, len(seeded)),
            _timed(f"{name}, again (nothing left)", path, run, len(seeded))]
    with psycopg.connect(owner) as conn:
        merged = conn.execute("SELECT id, superseded_by FROM memory WHERE tenant_id = %s AND "
                              "state = 'deprecated'", (tenant_id,)).fetchall()
    text = {memory_id: stated for memory_id, (_, stated, _) in zip(ids, seeded, strict=True)}
    wrong = sum(1 for memory_id, kept in merged if fact[memory_id] != fact.get(kept))
    exact = sum(1 for memory_id, kept in merged if text[memory_id] == text.get(kept))
    print(f"consolidation: {len(merged) - wrong:,} of {duplicates:,} restatements collapsed "
          f"({exact:,} exact repeats, {len(merged) - wrong - exact:,} paraphrases), "
          f"{wrong:,} collapsed into a different fact", flush=True)
    return rows


# -- plumbing ---------------------------------------------------------------------------------

def _now() -> datetime:
    return datetime.now(UTC)


def _timed(job: str, path: str, run: Callable[[], int], population: int) -> Row:
    print(f"{job} ({path}) over {population:,} memories…", end=" ", flush=True)
    started = time.perf_counter()
    changed = run()
    seconds = time.perf_counter() - started
    print(f"{changed:,} changed in {seconds:.2f} s", flush=True)
    return Row(job, path, changed, seconds)


def _tenant(name: str) -> uuid.UUID:
    tenant_id, _ = create_tenant(name)
    return tenant_id


def _seed(owner: str, tenant_id: uuid.UUID, seeds: Iterable[Seed], *, hnsw: bool = False,
          batch: int = 5_000) -> None:
    """COPY memories and their one version (the memories' foreign keys off for the load),
    then statistics."""
    started, done = time.perf_counter(), 0
    with psycopg.connect(owner) as conn:
        index_sql = None
        if hnsw:
            index_sql = take_routed_index(conn)
        chunk: list[Seed] = []
        for seed in seeds:
            chunk.append(seed)
            if len(chunk) == batch:
                _copy(conn, tenant_id, chunk)
                done += len(chunk)
                chunk = []
        if chunk:
            _copy(conn, tenant_id, chunk)
            done += len(chunk)
        if index_sql is not None:
            print(f"  building the HNSW index over {done:,} vectors…", flush=True)
            conn.execute("SET maintenance_work_mem = '2GB'")
            conn.execute("SET max_parallel_maintenance_workers = 2")
            conn.execute(index_sql)
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE memory")
        conn.execute("VACUUM ANALYZE memory_version")
    print(f"  seeded {done:,} memories in {time.perf_counter() - started:.0f} s", flush=True)


def _copy(conn: psycopg.Connection[Any], tenant_id: uuid.UUID, seeds: list[Seed]) -> None:
    with conn.cursor() as cur:
        cur.execute("SET session_replication_role = replica")
        memories: list[tuple[Any, ...]] = []
        versions: list[tuple[Any, ...]] = []
        for seed in seeds:
            memory_id, version_id = seed.id or uuid.uuid4(), uuid.uuid4()
            at = NOW - timedelta(days=seed.age_days)
            memories.append((memory_id, tenant_id, *sealed.subject(tenant_id, memory_id,
                                                                   seed.subject),
                             seed.volatility, seed.state, 1,
                             version_id, json.dumps(seed.depends_on or {}), at, at, at, at))
            versions.append((version_id, tenant_id, memory_id, seed.subject, seed.text,
                             None if seed.embedding is None
                             else vector_literal(list(seed.embedding))))
        with cur.copy("COPY memory (id, tenant_id, subject, sealed_subject, volatility, state,"
                      " revision, current_version_id, depends_on, created_at, updated_at,"
                      " last_validated_at, state_changed_at) FROM STDIN") as copy:
            for row in memories:
                copy.write_row(row)
        # The versions' foreign keys and routing trigger (migration 0014) stay on.
        cur.execute("SET session_replication_role = origin")
        columns = sealed.stored(conn, tenant_id, [(row[0], row[3], row[4]) for row in versions])
        with cur.copy("COPY memory_version (id, tenant_id, memory_id, seq, sealed_text, search,"
                      " embedding) FROM STDIN") as copy:
            for row in versions:
                copy.write_row((*row[:3], 1, *columns[row[0]], row[5]))
    conn.commit()


def _seed_operations(owner: str, tenant_id: uuid.UUID, count: int) -> None:
    """Stored answers of a week of other writes, as idempotency keeps them."""
    with psycopg.connect(owner) as conn:
        with conn.cursor().copy(
            "COPY operation (id, tenant_id, idempotency_key, kind, request_method,"
            " request_path, request_digest, status, response_status, response_body,"
            " response_headers, expires_at) FROM STDIN"
        ) as copy:
            for index, text in enumerate(memory_texts(count, seed=3)):
                body = {"id": str(uuid.uuid4()), "subject": f"user:{index % 1000:05d}",
                        "text": text, "revision": 1, "state": "active"}
                copy.write_row((uuid.uuid4(), tenant_id, f"bench-{index}", "request", "POST",
                                "/v1/memories", "0" * 64, "succeeded", 201, json.dumps(body),
                                "{}", NOW + timedelta(days=7)))
        conn.commit()
        conn.execute("ANALYZE operation")
        conn.commit()


def _age(owner: str, tenant_id: uuid.UUID, column: str, *, days: float) -> None:
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute(f"UPDATE memory SET {column} = {column} - make_interval(days => %s) "
                     "WHERE tenant_id = %s", (days, tenant_id))
        conn.execute("VACUUM ANALYZE memory")


def _count(owner: str, tenant_id: uuid.UUID, where: str) -> int:
    with psycopg.connect(owner) as conn:
        return int(one_value(conn.execute(
            f"SELECT count(*) FROM memory WHERE tenant_id = %s AND {where}", (tenant_id,))))


def _snapshot(owner: str, tenant_id: uuid.UUID) -> dict[uuid.UUID, tuple[str, int]]:
    with psycopg.connect(owner) as conn:
        return {row[0]: (row[1], row[2]) for row in conn.execute(
            "SELECT id, state, revision FROM memory WHERE tenant_id = %s", (tenant_id,))}


def _changed_since(owner: str, tenant_id: uuid.UUID,
                   before: dict[uuid.UUID, tuple[str, int]]) -> int:
    """Memories whose state or revision moved, plus memories that did not exist before."""
    after = _snapshot(owner, tenant_id)
    return sum(1 for memory_id, now in after.items() if before.get(memory_id) != now)


def _embeddings(texts: list[str], cache_dir: Path) -> list[list[float]]:
    import hashlib

    import numpy as np

    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    cache = cache_dir / f"minilm-{digest}.npy"
    if cache.exists():
        print(f"consolidation: embeddings from {cache}", flush=True)
        return [list(map(float, row)) for row in np.load(cache)]
    from app.embeddings.runtime import embedder

    print(f"consolidation: embedding {len(texts):,} texts with MiniLM…", flush=True)
    started = time.perf_counter()
    model, vectors = embedder(), []
    for start in range(0, len(texts), 2_000):
        vectors += model.embed(texts[start:start + 2_000])
        print(f"  {len(vectors):,}/{len(texts):,}", end="\r", flush=True)
    print(f"\n  embedded in {time.perf_counter() - started:.0f} s", flush=True)
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(cache, np.asarray(vectors, dtype=np.float32))
    return vectors


if __name__ == "__main__":
    main()
