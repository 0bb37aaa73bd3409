"""Forget benchmark on the embedded PostgreSQL (a script, not a test).

    .venv/bin/python bench/forget_bench.py [--memories 200] [--subject-size 1000]

(a) forget latency (POST /v1/memories/{id}/forget, delete + exclude) for memories that each
have 10 versions, (b) POST /v1/forget (forget by description) over a subject holding
`--subject-size` memories, a few of which mention the topic: dry runs and real runs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import create_tenant, live_api, percentile, use_data_dir
from bench.synthetic import memory_texts

TOPICS = ["rare sneakers", "vintage watches", "stamp albums", "vinyl records", "comic books",
          "antique clocks", "model trains", "rare coins", "old cameras", "movie posters"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=200, help="10-version memories to forget")
    parser.add_argument("--subject-size", type=int, default=1_000)
    parser.add_argument("--dry-runs", type=int, default=50)
    args = parser.parse_args()

    use_data_dir(Path(tempfile.mkdtemp(prefix="lethe-forget-bench-")))
    from app.core import migrations
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    _, key = create_tenant("Forget bench")
    headers = {"Authorization": f"Bearer {key}"}
    try:
        with live_api(runtime) as base, httpx.Client(base_url=base, headers=headers,
                                                     timeout=120) as client:
            print(f"creating {args.memories} memories with 10 versions each…", flush=True)
            ids = _versioned_memories(base, headers, args.memories)
            forget_ms = []
            for memory_id in ids:
                started = time.perf_counter()
                response = client.post(f"/v1/memories/{memory_id}/forget", json={})
                forget_ms.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, response.text
            print(f"seeding a subject with {args.subject_size} memories…", flush=True)
            _subject(base, headers, args.subject_size)
            dry_ms = _describe(client, [{"about": f"that I collect {TOPICS[i % len(TOPICS)]}",
                                         "dry_run": True} for i in range(args.dry_runs)])
            real_ms = _describe(client, [{"about": f"that I collect {topic}"}
                                         for topic in TOPICS])
    finally:
        if runtime.embedded_server is not None:
            runtime.embedded_server.stop()
    print()
    print("| measure | p50 ms | p95 ms |")
    print("|---|---|---|")
    print(f"| forget one memory with 10 versions ({len(forget_ms)} runs) | "
          f"{percentile(forget_ms, 50):.1f} | {percentile(forget_ms, 95):.1f} |")
    print(f"| forget by description, dry run, subject of {args.subject_size} "
          f"({len(dry_ms)} runs) | {percentile(dry_ms, 50):.1f} | {percentile(dry_ms, 95):.1f} |")
    print(f"| forget by description, applied, subject of {args.subject_size} "
          f"({len(real_ms)} runs) | {percentile(real_ms, 50):.1f} | "
          f"{percentile(real_ms, 95):.1f} |")


def _versioned_memories(base: str, headers: dict[str, str], count: int) -> list[str]:
    def one(index: int) -> str:
        with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
            created = client.post("/v1/memories", json={
                "subject": f"bench:{index}", "text": f"Version 1 of fact {index}.",
                "source": f"conversation:{index}"}).json()
            revision = created["revision"]
            for version in range(2, 11):
                response = client.patch(f"/v1/memories/{created['id']}",
                                        json={"text": f"Version {version} of fact {index}."},
                                        headers={"If-Match": f'"{revision}"'})
                assert response.status_code == 200, response.text
                revision = response.json()["revision"]
            return str(created["id"])

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, range(count)))


def _subject(base: str, headers: dict[str, str], size: int) -> None:
    texts = list(memory_texts(size - 3 * len(TOPICS), seed=5))
    for topic in TOPICS:
        texts += [f"I collect {topic} and keep them in the attic.",
                  f"I live in Leeds. I collect {topic}. I work as a nurse.",
                  f"My brother also likes {topic} but never buys any."]

    def write(share: list[str]) -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
            for text in share:
                response = client.post("/v1/memories", json={"subject": "user:big",
                                                             "text": text})
                assert response.status_code == 201, response.text

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, [texts[i::4] for i in range(4)]))


def _describe(client: httpx.Client, bodies: list[dict[str, object]]) -> list[float]:
    times = []
    for body in bodies:
        started = time.perf_counter()
        response = client.post("/v1/forget", json={"subject": "user:big", **body})
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
    return times


if __name__ == "__main__":
    main()
