"""An import beside live traffic, against a fresh `lethe serve` (embedded default): `lethe
import` of N lines at its defaults while single writes and recalls run beside it, each of
those sent once (no retries: a 503 is a failure there, as for any client without them).

    .venv/bin/python bench/import_bench.py [--lines 2400] [--writers 2] [--readers 2]
    .venv/bin/python bench/import_bench.py --sample-db /tmp/activity.log   # + pg_stat_activity

Prints the import's time and tally, the 503s (all routes), the importer's retries (its
retryable answers: 503, 429, 409 in progress), the side requests' statuses, and the API's
pool waits from `/metrics` (`lethe_db_pool_wait_seconds`): how many took over 1 s, the
longest. Traffic goes only to the loopback address of the server this script starts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port, percentile  # noqa: E402
from bench.load import start_server, stop_server, tenant_key  # noqa: E402
from bench.synthetic import memory_texts  # noqa: E402

MEMORIES = "/v1/memories"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2400)
    parser.add_argument("--subjects", type=int, default=40)
    parser.add_argument("--writers", type=int, default=2, help="threads of single writes")
    parser.add_argument("--readers", type=int, default=2, help="threads of recalls")
    parser.add_argument("--pause", type=float, default=0.2,
                        help="seconds each side thread waits between its requests")
    parser.add_argument("--sample-db", type=Path, default=None,
                        help="write pg_stat_activity and lock waits here every 0.5 s")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy the server's log and its last /metrics into this folder")
    args = parser.parse_args()
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="lethe-import-", dir="/tmp") as scratch:
        data_dir = Path(scratch) / "data"
        port = free_port()
        server = start_server(data_dir, port, Path(scratch) / "serve.log")
        stop = threading.Event()
        threads: list[threading.Thread] = []
        try:
            base = f"http://127.0.0.1:{port}"
            key = tenant_key(base, data_dir, server)
            source = Path(scratch) / "import.jsonl"
            write_lines(source, args.lines, args.subjects)
            if args.sample_db is not None:
                threads.append(threading.Thread(
                    target=sample_db, args=(data_dir, args.sample_db, stop), daemon=True))
            side: Counter[tuple[str, int]] = Counter()
            times: dict[str, list[float]] = {"write": [], "recall": []}
            for n in range(args.writers):
                threads.append(threading.Thread(target=side_loop, daemon=True, args=(
                    base, key, "write", n, args.subjects, args.pause, stop, side, times)))
            for n in range(args.readers):
                threads.append(threading.Thread(target=side_loop, daemon=True, args=(
                    base, key, "recall", n, args.subjects, args.pause, stop, side, times)))
            for thread in threads:
                thread.start()
            started = time.monotonic()
            imported = run_import(base, key, source)
            seconds = time.monotonic() - started
            stop.set()
            for thread in threads:
                thread.join(120)
            scraped = scrape(base, data_dir, args.keep)
        finally:
            stop.set()
            stop_server(server)
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(Path(scratch) / "serve.log", args.keep / "serve.log")
    print(f"load average after: {load_average()}")
    report(args, imported, seconds, side, times, scraped)


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def write_lines(path: Path, count: int, subjects: int) -> None:
    with path.open("w") as out:
        for n, text in enumerate(memory_texts(count, seed=11, distinct=True)):
            out.write(json.dumps({"subject": f"user:{n % subjects}", "text": text}) + "\n")


def run_import(base: str, key: str, source: Path) -> str:
    """`lethe import` at its defaults; its closing tally line."""
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "import", str(source), "--url", base,
         "--api-key", key], cwd=ROOT, capture_output=True, text=True, check=False)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def side_loop(base: str, key: str, kind: str, number: int, subjects: int, pause: float,
              stop: threading.Event, statuses: Counter[tuple[str, int]],
              times: dict[str, list[float]]) -> None:
    """One client that sends each request once and counts the answers."""
    sent = 0
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"},
                      timeout=120) as client:
        while not stop.is_set():
            subject = f"user:{(number * 7 + sent) % subjects}"
            started = time.monotonic()
            try:
                if kind == "write":
                    status = client.post(MEMORIES, json={
                        "subject": subject,
                        "text": f"Side note {number}-{sent}: prefers aisle seats."}).status_code
                else:
                    status = client.post("/v1/recall", json={
                        "subject": subject, "query": "where do they live"}).status_code
            except httpx.HTTPError:
                status = 0
            times[kind].append((time.monotonic() - started) * 1000)
            statuses[(kind, status)] += 1
            sent += 1
            stop.wait(pause)


def sample_db(data_dir: Path, out: Path, stop: threading.Event) -> None:
    """Every 0.5 s: the application's connections by state, the oldest open transaction and
    who waits on which lock (for the cause of pool waits; not part of the figures)."""
    import psycopg

    from app.core import embedded

    server = embedded.start(data_dir)
    with psycopg.connect(server.url(database="lethe").replace("postgresql+psycopg", "postgresql"),
                         autocommit=True) as conn, out.open("w") as log:
        while not stop.is_set():
            rows = conn.execute("""
                SELECT a.pid, a.usename, a.state, a.wait_event_type, a.wait_event,
                       round(extract(epoch FROM now() - a.xact_start)::numeric, 2),
                       left(regexp_replace(a.query, '\\s+', ' ', 'g'), 140),
                       (SELECT string_agg(l.locktype || ':' || l.mode, ',') FROM pg_locks l
                         WHERE l.pid = a.pid AND NOT l.granted)
                FROM pg_stat_activity a
                WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
                ORDER BY a.xact_start NULLS LAST""").fetchall()
            log.write(f"--- {time.strftime('%H:%M:%S')} {len(rows)} connections\n")
            for row in rows:
                log.write(" | ".join("" if v is None else str(v) for v in row) + "\n")
            log.flush()
            stop.wait(0.5)


def scrape(base: str, data_dir: Path, keep: Path | None) -> dict[str, Any]:
    """The API's own counts: answers by route and status, and the pool's waits."""
    from prometheus_client.parser import text_string_to_metric_families

    token = json.loads((data_dir / "secrets.json").read_text())["admin_token"]
    body = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"},
                     timeout=60).text
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / "metrics.txt").write_text(body)
    answers: Counter[tuple[str, str, str]] = Counter()
    buckets: dict[float, float] = {}
    longest = 0.0
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            if sample.name == "lethe_request_duration_seconds_count":
                labels = sample.labels
                answers[(labels["route"], labels["method"], labels["status"])] += int(sample.value)
            elif sample.name == "lethe_db_pool_wait_seconds_bucket":
                buckets[float(sample.labels["le"])] = sample.value
            elif sample.name == "lethe_db_pool_wait_max_seconds":
                longest = sample.value
    waits = buckets.get(float("inf"), 0.0)
    return {"answers": answers, "waits": int(waits),
            "waits_over_1s": int(waits - buckets.get(1.0, 0.0)), "longest_wait": longest}


def report(args: argparse.Namespace, imported: str, seconds: float,
           side: Counter[tuple[str, int]], times: dict[str, list[float]],
           scraped: dict[str, Any]) -> None:
    answers: Counter[tuple[str, str, str]] = scraped["answers"]
    unavailable = sum(n for (_, _, status), n in answers.items() if status == "503")
    retryable = sum(n for (route, method, status), n in answers.items()
                    if route == MEMORIES and method == "POST" and status in ("503", "429", "409"))
    side_retryable = sum(n for (kind, status), n in side.items()
                         if kind == "write" and status in (503, 429, 409))
    print(f"import: {args.lines} lines in {seconds:.0f} s ({args.lines / seconds:.1f}/s); "
          f"{imported}")
    print(f"503s: {unavailable}; importer retries: {retryable - side_retryable}; "
          f"pool waits: {scraped['waits']}, over 1 s: {scraped['waits_over_1s']}, "
          f"longest {scraped['longest_wait']:.3f} s")
    for kind in ("write", "recall"):
        statuses = {status: n for (k, status), n in sorted(side.items()) if k == kind}
        if times[kind]:
            print(f"side {kind}s: {statuses}; p50 {percentile(times[kind], 50):.0f} ms, "
                  f"p95 {percentile(times[kind], 95):.0f} ms")
    for (route, method, status), n in sorted(answers.items()):
        if status >= "400":
            print(f"answers: {n} x {status} {method} {route}")


if __name__ == "__main__":
    main()
