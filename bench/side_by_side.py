"""Two source trees of Lethe, measured side by side in one run (a script, not a test).

    .venv/bin/python bench/side_by_side.py --tree before=../lethe-old --tree after=.
        [--subjects 20] [--facts 2000] [--queries 200] [--singles 100] [--rounds 3]

For a change's cost: each tree runs its own `lethe serve` (API, worker, beat, embedded
PostgreSQL in a data folder of its own) from the same virtualenv, with the same data. First
each imports `--facts` facts of `--subjects` subjects in `POST /v1/memories/batch` requests
of 100 (batch import); then, in `--rounds` rounds that alternate which tree goes first, each
serves `--queries` recalls, `--singles` single writes and as many forgets
(`DELETE /v1/memories/{id}` of those writes), one at a time. Prints p50 and p95 per
operation and tree, and each tree's ratio to the first.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import free_port, percentile
from bench.load import start_server, stop_server, tenant_key
from bench.synthetic import memory_texts

BATCH = 100
OPERATIONS = ("batch import (100)", "recall", "write", "forget")


@dataclass
class Tree:
    name: str
    root: Path
    base: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)

    def timed(self, client: httpx.Client, operation: str, method: str, path: str,
              body: dict[str, Any] | None = None) -> httpx.Response:
        start = time.perf_counter()
        response = client.request(method, path, json=body)
        self.times.setdefault(operation, []).append((time.perf_counter() - start) * 1000)
        if response.status_code >= 400:
            raise SystemExit(f"{self.name}: {operation} answered {response.status_code}: "
                             f"{response.text[:300]}")
        return response


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=DIR",
                        help="a name and a Lethe source tree (twice or more)")
    parser.add_argument("--subjects", type=int, default=20)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--singles", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    trees = [Tree(name, Path(root).resolve())
             for name, _, root in (spec.partition("=") for spec in args.tree)]
    texts = list(memory_texts(args.facts + args.singles * args.rounds, seed=11))
    subjects = [f"user:{n}" for n in range(args.subjects)]
    with ExitStack() as stack:
        for tree in trees:
            stack.enter_context(serving(tree))
        for tree in trees:
            print(f"{tree.name}: importing {args.facts} facts", flush=True)
            import_facts(tree, texts[:args.facts], subjects)
        rng = random.Random(5)
        queries = [(rng.choice(subjects), " ".join(rng.sample(text.split(), 4)))
                   for text in rng.sample(texts[:args.facts], args.queries)]
        singles = iter(texts[args.facts:])
        for round_no in range(args.rounds):
            writes = [(rng.choice(subjects), next(singles)) for _ in range(args.singles)]
            order = trees if round_no % 2 == 0 else trees[::-1]
            for tree in order:
                print(f"round {round_no + 1}/{args.rounds}: {tree.name}", flush=True)
                one_round(tree, queries, writes)
    report(trees)


@contextmanager
def serving(tree: Tree) -> Iterator[None]:
    with tempfile.TemporaryDirectory(prefix=f"lethe-{tree.name}-") as folder:
        data_dir = Path(folder)
        port = free_port()
        log = data_dir / "serve.log"
        server = start_server(data_dir / "data", port, log, cwd=tree.root,
                              settings={"PYTHONPATH": str(tree.root)})
        try:
            tree.base = f"http://127.0.0.1:{port}"
            key = tenant_key(tree.base, data_dir / "data", server)
            tree.headers = {"Authorization": f"Bearer {key}"}
            yield
        finally:
            stop_server(server)


def import_facts(tree: Tree, texts: list[str], subjects: list[str]) -> None:
    with httpx.Client(base_url=tree.base, headers=tree.headers, timeout=300) as client:
        for start in range(0, len(texts), BATCH):
            body = {"memories": [{"subject": subjects[(start + n) % len(subjects)], "text": text}
                                 for n, text in enumerate(texts[start:start + BATCH])]}
            tree.timed(client, OPERATIONS[0], "POST", "/v1/memories/batch", body)


def one_round(tree: Tree, queries: list[tuple[str, str]],
              writes: list[tuple[str, str]]) -> None:
    with httpx.Client(base_url=tree.base, headers=tree.headers, timeout=120) as client:
        for subject, query in queries:
            tree.timed(client, "recall", "POST", "/v1/recall",
                       {"subject": subject, "query": query, "limit": 10})
        written: list[Any] = []
        for subject, text in writes:
            response = tree.timed(client, "write", "POST", "/v1/memories",
                                  {"subject": subject, "text": text})
            written.append(response.json()["id"])
        for memory_id in written:
            tree.timed(client, "forget", "DELETE", f"/v1/memories/{memory_id}")


def report(trees: list[Tree]) -> None:
    first = trees[0]
    names = " | ".join(tree.name for tree in trees)
    ratios = " | ".join(f"{tree.name} / {first.name}" for tree in trees[1:])
    print(f"\n| operation (ms) | {names} | {ratios} |")
    print("|---" * (1 + len(trees) + len(trees) - 1) + "|")
    for operation in OPERATIONS:
        cells, figures = [], []
        for tree in trees:
            values = tree.times.get(operation, [])
            p50, p95 = percentile(values, 50), percentile(values, 95)
            figures.append((p50, p95))
            cells.append(f"{p50:.1f} / {p95:.1f}")
        shares = [f"{p50 / figures[0][0]:.2f} / {p95 / figures[0][1]:.2f}"
                  for p50, p95 in figures[1:]]
        print(f"| {operation} p50 / p95 | {' | '.join(cells)} | {' | '.join(shares)} |")


if __name__ == "__main__":
    main()
