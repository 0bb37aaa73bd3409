"""Load and soak against a real `lethe serve` (embedded default): locust sends a mixed load
(recall 70 %, writes 20 %, forgets 10 %) at a constant rate, then every acknowledged write is
read back (a lost write is one answered 201 that does not read 200 after; a forgotten one must
read 404). With --soak, the resident memory of the API and of the worker (each with its child
processes) is sampled every 10 s and printed with its slope.

    .venv/bin/python bench/load.py                 # 60 s at 50 requests/s
    .venv/bin/python bench/load.py --soak 600      # 10 minutes, RSS every 10 s

Traffic goes only to the loopback address of the server this script starts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port, percentile  # noqa: E402

LOCUSTFILE = ROOT / "bench" / "load_locustfile.py"
KINDS = ("recall", "write", "forget")
SAMPLE_SECONDS = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=60, help="seconds of load")
    parser.add_argument("--rate", type=int, default=50, help="requests per second (users)")
    parser.add_argument("--soak", type=int, default=0,
                        help="seconds of load with RSS sampled every 10 s (overrides duration)")
    parser.add_argument("--subjects", type=int, default=20)
    parser.add_argument("--seed", type=int, default=5, help="memories written per subject first")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="the server's data folder (default: a fresh temporary one)")
    parser.add_argument("--tracemalloc", type=Path, default=None,
                        help="the API appends its allocation growth here (LETHE_TRACEMALLOC_FILE; "
                        "slows it)")
    parser.add_argument("--tracemalloc-seconds", type=int, default=60,
                        help="seconds between its snapshots, the first one the baseline")
    args = parser.parse_args()
    duration = args.soak or args.duration
    with tempfile.TemporaryDirectory(prefix="lethe-load-") as scratch:
        data_dir = args.data_dir or Path(scratch) / "data"
        port = free_port()
        server_log = Path(scratch) / "serve.log"
        traced = {} if args.tracemalloc is None else {
            "LETHE_TRACEMALLOC_FILE": str(args.tracemalloc.resolve()),
            "LETHE_TRACEMALLOC_SECONDS": str(args.tracemalloc_seconds)}
        server = start_server(data_dir, port, server_log, traced)
        try:
            base = f"http://127.0.0.1:{port}"
            key = tenant_key(base, data_dir, server)
            seed(base, key, args.subjects, args.seed)
            samples: list[tuple[float, ...]] = []
            stop = threading.Event()
            sampler = threading.Thread(target=sample_rss, args=(server.pid, samples, stop),
                                       daemon=True)
            if args.soak:
                sampler.start()
            acks = run_locust(base, key, args.rate, duration, args.subjects, Path(scratch))
            stop.set()
            lost, resurrected = read_back(base, key, acks)
        finally:
            stop_server(server)
        causes = server_errors(server_log)
    report(acks, duration, args.rate, lost, resurrected)
    for cause, count in causes.most_common(5):
        print(f"server log: {count} times {cause}")
    if args.soak:
        report_rss(samples)


def start_server(data_dir: Path, port: int, log: Path,
                 settings: dict[str, str] | None = None, *, cwd: Path = ROOT
                 ) -> subprocess.Popen[str]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("LETHE_") and name not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update({"LETHE_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", **(settings or {})})
    return subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
                            cwd=cwd, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, text=True)


def stop_server(server: subprocess.Popen[str]) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(90)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def tenant_key(base: str, data_dir: Path, server: subprocess.Popen[str]) -> str:
    """Wait until the API is ready, then create a tenant with the admin token."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"lethe serve exited with {server.returncode}")
        try:
            if httpx.get(f"{base}/readyz", timeout=10).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(1)
    else:
        raise SystemExit("lethe serve did not become ready")
    token = json.loads((data_dir / "secrets.json").read_text())["admin_token"]
    created = httpx.post(f"{base}/v1/tenants", json={"name": "Load"}, timeout=60,
                         headers={"Authorization": f"Bearer {token}"})
    created.raise_for_status()
    return str(created.json()["api_keys"]["app"])


def seed(base: str, key: str, subjects: int, per_subject: int) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        for subject in range(subjects):
            for n in range(per_subject):
                client.post("/v1/memories", json={
                    "subject": f"user:{subject}",
                    "text": f"Lives in city {n} and drinks tea number {n}."}).raise_for_status()


def run_locust(base: str, key: str, rate: int, duration: int, subjects: int,
               scratch: Path) -> dict[str, Any]:
    """What the locust process recorded: acknowledged writes, forgets and request times."""
    env = {**os.environ, "LOAD_KEY": key, "LOAD_SUBJECTS": str(subjects),
           "LOAD_ACKS": str(scratch / "acks.json")}
    subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless", "--host", base,
         "-u", str(rate), "-r", str(rate), "-t", f"{duration}s", "--only-summary",
         # Requests in flight at the end finish, so their answers are known.
         "--stop-timeout", "60",
         "--loglevel", "WARNING", "--exit-code-on-error", "0"],
        env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return dict(json.loads((scratch / "acks.json").read_text()))


def read_back(base: str, key: str, acks: dict[str, Any]) -> tuple[int, int]:
    """(lost writes, forgotten memories still readable). A memory whose forget was sent but
    not answered 204 may read either way, and counts as neither."""
    forgotten = set(acks["forgotten"])
    unsure = set(acks["sent_forgets"]) - forgotten
    lost = resurrected = 0
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"},
                      timeout=60) as client:
        for memory_id in acks["written"]:
            status = client.get(f"/v1/memories/{memory_id}").status_code
            if memory_id in forgotten:
                resurrected += status != 404
            elif memory_id in unsure:
                continue
            else:
                lost += status != 200
    return lost, resurrected


def group_rss(root: psutil.Process, marker: str, *, alone: bool = False,
              anonymous: bool = False) -> float:
    """MB resident in the child of ``root`` whose command line has ``marker``, with its own
    children (the API's embedding process, the worker's pool) unless ``alone``. With
    ``anonymous``, file-backed pages are left out: the model's weights file is mapped, and
    its pages count as resident once touched (each new token reads its row of the
    embedding matrix), up to the file's 91 MB, clean and reclaimable by the kernel."""
    for child in root.children():
        try:
            if marker in " ".join(child.cmdline()):
                family = [child] if alone else [child, *child.children(recursive=True)]
                infos = [p.memory_info() for p in family]
                # On Linux, `shared` is RssFile + RssShmem.
                return sum(i.rss - i.shared if anonymous else i.rss for i in infos) / 2**20
        except psutil.NoSuchProcess:
            continue
    return float("nan")


def sample_rss(pid: int, samples: list[tuple[float, ...]],
               stop: threading.Event) -> None:
    root = psutil.Process(pid)
    start = time.monotonic()
    while not stop.is_set():
        samples.append((time.monotonic() - start, group_rss(root, "uvicorn"),
                        group_rss(root, "worker"), group_rss(root, "uvicorn", alone=True),
                        group_rss(root, "uvicorn", anonymous=True)))
        stop.wait(SAMPLE_SECONDS)


def slope_mb_per_minute(points: list[tuple[float, float]]) -> float:
    if len(points) < 2:
        return 0.0
    xs, ys = zip(*points, strict=True)
    return float(statistics.linear_regression(xs, ys).slope) * 60


def server_errors(log: Path) -> Counter[str]:
    """The unhandled errors the API logged (what a 500 hid), by the traceback's last line."""
    found: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        if '"unhandled error"' not in line:
            continue
        try:
            error = str(json.loads(line).get("error", ""))
        except ValueError:
            continue
        found[error.strip().splitlines()[-1][:160] if error.strip() else "?"] += 1
    return found


def report(acks: dict[str, Any], duration: int, rate: int, lost: int, resurrected: int) -> None:
    timings = acks["timings"]
    errors = sum(failed for _, _, failed in timings)
    print(f"load: {duration} s at {rate} requests/s offered; {len(timings) / duration:.1f} "
          f"requests/s served, {len(timings)} requests, {errors} errors")
    print("| kind | requests | errors | p50 ms | p95 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in KINDS:
        times = [ms for name, ms, _ in timings if name == kind]
        failed = sum(failed for name, _, failed in timings if name == kind)
        if times:
            print(f"| {kind} | {len(times)} | {failed} | {percentile(times, 50):.0f} | "
                  f"{percentile(times, 95):.0f} | {percentile(times, 99):.0f} |")
    for (kind, error), count in Counter(map(tuple, acks["errors"])).most_common(5):
        print(f"errors: {count} {kind}: {error}")
    print(f"writes acknowledged: {len(acks['written'])}; lost: {lost}; "
          f"forgets: {len(acks['forgotten'])}; forgotten but readable: {resurrected}")


def report_rss(samples: list[tuple[float, ...]]) -> None:
    print("| second | API MB | worker MB | API process alone MB | API anonymous MB |")
    print("|---:|---:|---:|---:|---:|")
    for second, api, worker, alone, anonymous in samples:
        print(f"| {second:.0f} | {api:.0f} | {worker:.0f} | {alone:.0f} | {anonymous:.0f} |")
    for name, index in (("API", 1), ("worker", 2), ("API process alone", 3),
                        ("API anonymous (no file-backed pages)", 4)):
        points = [(s[0], s[index]) for s in samples]
        # The first minute is warm-up (pools, caches, the model's first batches).
        steady = [p for p in points if p[0] >= 60] or points
        print(f"{name}: {points[0][1]:.0f} → {points[-1][1]:.0f} MB; slope after the first "
              f"minute {slope_mb_per_minute(steady):+.2f} MB/min")


if __name__ == "__main__":
    main()
