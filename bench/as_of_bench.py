"""Point-in-time recall against current recall, in process, on the embedded PostgreSQL (a
script, not a test).

    .venv/bin/python bench/as_of_bench.py [--memories 100000] [--subjects 1000] [--queries 300]

Seeds N memories over S subjects as `bench/recall_bench.py` does (COPY, embedded with the
local MiniLM; a data folder seeded before is reused with `--data-dir`), then times
`recall.service.recall` for random (subject, query) pairs, the query vectors embedded
beforehand, in alternating blocks: current recall, then the same asks `as_of` an hour ago.
Prints p50 and p95 of each and the ratio of the p95s. `--current-only` times current recall
alone and skips the migration, so the same folder can be timed with another checkout's code
(`LETHE_BENCH_CODE=<checkout>`) to compare current recall before and after a change.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CODE = Path(os.environ.get("LETHE_BENCH_CODE") or Path(__file__).resolve().parents[1])
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(CODE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import uuid  # noqa: E402

from bench import synthetic  # noqa: E402
from bench.common import create_tenant, percentile, use_data_dir  # noqa: E402

BLOCK = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--subjects", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=300, help="recalls of each kind")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--current-only", action="store_true")
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="lethe-as-of-bench-"))
    use_data_dir(data_dir)
    os.environ["LETHE_EMBEDDING_THREADS"] = "2"
    from app.core import migrations
    from app.core.runtime import get_runtime
    from app.embeddings.runtime import embedder
    from app.recall import service
    from app.recall.schemas import RecallRequest
    from bench.recall_bench import _seed

    runtime = get_runtime()
    if not args.current_only:
        migrations.upgrade(runtime)
    owner = runtime.owner_url.replace("postgresql+psycopg://", "postgresql://")
    model = embedder()
    state_file = data_dir / "as_of_bench.json"
    if state_file.exists():
        state = json.loads(state_file.read_text())
        tenant_id = uuid.UUID(state["tenant_id"])
        args.memories, args.subjects = state["memories"], state["subjects"]
        print(f"reusing {args.memories:,} memories in {data_dir}", flush=True)
    else:
        tenant_id, _ = create_tenant("Bench")
        started = time.perf_counter()
        _seed(owner, tenant_id, synthetic.memory_texts(args.memories, distinct=True), args.memories,
              args.subjects, model.embed)
        print(f"seeded {args.memories:,} memories in {time.perf_counter() - started:.0f} s",
              flush=True)
        state_file.write_text(json.dumps({"tenant_id": str(tenant_id),
                                          "memories": args.memories,
                                          "subjects": args.subjects}))
    queries = list(synthetic.QUERIES)
    vectors = dict(zip(queries, model.embed(queries), strict=True))
    pick = random.Random(7)
    asks = [(f"user:{pick.randrange(args.subjects):05d}", pick.choice(queries))
            for _ in range(args.queries)]
    then = datetime.now(UTC) - timedelta(hours=1)

    def timed(subject: str, query: str, as_of: datetime | None) -> float:
        fields: dict[str, Any] = {"as_of": as_of} if as_of is not None else {}
        request = RecallRequest(subject=subject, query=query, limit=10, **fields)
        started = time.perf_counter()
        service.recall(tenant_id, request, vectors[query])
        return (time.perf_counter() - started) * 1000

    for subject, query in asks[:10]:  # warm the pools and plans
        timed(subject, query, None)
        if not args.current_only:
            timed(subject, query, then)
    current: list[float] = []
    past: list[float] = []
    for start in range(0, len(asks), BLOCK):
        block = asks[start:start + BLOCK]
        current += [timed(subject, query, None) for subject, query in block]
        if not args.current_only:
            past += [timed(subject, query, then) for subject, query in block]
    print(f"{args.memories:,} memories, {args.subjects:,} subjects "
          f"(≈ {args.memories // args.subjects} a subject), {len(asks)} recalls of each kind, "
          f"code: {CODE}")
    print(f"current recall  p50 {percentile(current, 50):6.1f} ms  "
          f"p95 {percentile(current, 95):6.1f} ms")
    if past:
        print(f"as_of recall    p50 {percentile(past, 50):6.1f} ms  "
              f"p95 {percentile(past, 95):6.1f} ms  "
              f"(p95 ratio {percentile(past, 95) / percentile(current, 95):.2f})")


if __name__ == "__main__":
    main()
