"""One big tenant's mixed write throughput (creates 50 %, corrections 30 %, forgets 20 %) at
concurrency 1, 8 and 32, with auditing on and off, on the embedded PostgreSQL.

Every audited transaction of a tenant takes the tenant's chain lock (`app/audit/service.py`,
`_lock_chain`) and holds it until commit. Every write of this mix audits: a create is
`memory.created`, a correction `memory.corrected`, a forget its transition
(docs/decisions.md). "Off" is a bench-only path: this process replaces the audit append
with a no-op, so the same transactions run without the lock and the event rows. With
auditing on, the time each transaction waited for the lock is measured too.

The writes go through the same services the routes call, one unit of work each, from threads
of this process; texts are embedded beforehand, so the figures are the database's, not the
model's.

    .venv/bin/python bench/big_tenant.py                     # 20 s per cell
    .venv/bin/python bench/big_tenant.py --seconds 60 --concurrency 1,8,32
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import create_tenant, use_data_dir  # noqa: E402

ACTOR = "system:bench"


@dataclass
class Tally:
    lock = threading.Lock()
    ops: dict[str, int] = field(default_factory=lambda: {"create": 0, "correct": 0, "forget": 0})
    errors: int = 0
    lock_wait: float = 0.0
    busy: float = 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per cell")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--texts", type=int, default=400, help="distinct texts embedded first")
    args = parser.parse_args()
    levels = [int(n) for n in args.concurrency.split(",")]
    with tempfile.TemporaryDirectory(prefix="lethe-big-tenant-") as scratch:
        use_data_dir(Path(scratch) / "data")
        import os

        os.environ["LETHE_DB_POOL_SIZE"] = str(max(levels) + 4)
        from app.core import migrations
        from app.core.runtime import get_runtime
        from app.embeddings.runtime import embedder

        runtime = get_runtime()
        migrations.upgrade(runtime)
        texts = [f"Enjoys hobby {n} with friend {n * 7 % 97} on day {n % 31}."
                 for n in range(args.texts)]
        vectors = embedder().embed(texts)
        try:
            print("| auditing | concurrency | writes/s | creates | corrections | forgets "
                  "| errors | chain-lock wait, share of transaction time |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|")
            # Interleaved, so the drift of a shared machine's load falls on both alike.
            for level in levels:
                for audited in (True, False):
                    tenant_id, _ = create_tenant(f"big-{uuid.uuid4().hex[:6]}")
                    with auditing(audited) as tally:
                        run_cell(tenant_id, level, args.seconds, texts, vectors, tally)
                    total = sum(tally.ops.values())
                    share = (f"{100 * tally.lock_wait / tally.busy:.1f} %" if audited
                             and tally.busy else "-")
                    print(f"| {'on' if audited else 'off'} | {level} | "
                          f"{total / args.seconds:.0f} | {tally.ops['create']} | "
                          f"{tally.ops['correct']} | {tally.ops['forget']} | {tally.errors} | "
                          f"{share} |", flush=True)
        finally:
            if runtime.embedded_server is not None:
                runtime.embedded_server.stop()


_current: Tally | None = None


@contextmanager
def auditing(on: bool) -> Iterator[Tally]:
    """Count the chain lock's wait (on), or skip every audit append (off: bench only)."""
    global _current
    from app.audit import service as audit

    tally = Tally()
    _current = tally
    saved = (audit.record, audit.record_many, audit._lock_chain)
    if on:
        def timed_lock(session: Any, tenant_id: uuid.UUID) -> None:
            started = time.perf_counter()
            saved[2](session, tenant_id)
            waited = time.perf_counter() - started
            with tally.lock:
                tally.lock_wait += waited
        audit._lock_chain = timed_lock
    else:
        audit.record = lambda *_a, **_k: None  # type: ignore[assignment]
        audit.record_many = lambda *_a, **_k: 0
    try:
        yield tally
    finally:
        audit.record, audit.record_many, audit._lock_chain = saved
        _current = None


def run_cell(tenant_id: uuid.UUID, level: int, seconds: float, texts: list[str],
             vectors: list[list[float]], tally: Tally) -> None:
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=client, args=(tenant_id, deadline, texts, vectors, tally,
                                                     seed)) for seed in range(level)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def client(tenant_id: uuid.UUID, deadline: float, texts: list[str], vectors: list[list[float]],
           tally: Tally, seed: int) -> None:
    from app.core.uow import unit_of_work
    from app.forgetting.forget import forget_memory
    from app.memories import service as memories
    from app.memories.schemas import MemoryCreate, MemoryPatch

    draw = random.Random(seed)
    own: list[tuple[uuid.UUID, int]] = []  # (memory, revision) this client wrote
    subject = f"user:{seed}"

    def create() -> None:
        n = draw.randrange(len(texts))
        written = memories.create(session, tenant_id=tenant_id, embedding=vectors[n],
                                  body=MemoryCreate(subject=subject, text=texts[n]),
                                  actor=ACTOR)
        assert written.memory is not None
        own.append((written.memory.id, written.memory.revision))

    def correct() -> None:
        memory_id, revision = own.pop(draw.randrange(len(own)))
        n = draw.randrange(len(texts))
        written = memories.update(session, tenant_id=tenant_id, memory_id=memory_id,
                                  if_match=f'"{revision}"', patch=MemoryPatch(text=texts[n]),
                                  embedding=vectors[n], actor=ACTOR)
        own.append((memory_id, written.revision))

    def forget() -> None:
        memory_id, _ = own.pop(draw.randrange(len(own)))
        forget_memory(session, tenant_id=tenant_id, memory_id=memory_id, delete=True,
                      exclude_source=False, about=None, reason=None, actor=ACTOR)

    kinds: list[tuple[str, Callable[[], None]]] = [("create", create), ("correct", correct),
                                                   ("forget", forget)]
    while time.monotonic() < deadline:
        roll = draw.random()
        kind, action = kinds[0] if roll < 0.5 or not own else (
            kinds[1] if roll < 0.8 else kinds[2])
        started = time.perf_counter()
        try:
            with unit_of_work(tenant_id) as session:
                action()
        except Exception:  # a deadlock victim or a conflict: counted, not retried
            with tally.lock:
                tally.errors += 1
            continue
        with tally.lock:
            tally.ops[kind] += 1
            tally.busy += time.perf_counter() - started


if __name__ == "__main__":
    main()
