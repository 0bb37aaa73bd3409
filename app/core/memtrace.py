"""Allocation traces of a running API, for benchmarks only (`LETHE_TRACEMALLOC_FILE`).

Python's tracemalloc costs memory and time on every allocation, so it is never on unless the
setting names a file. Then the first snapshot is taken after one interval (the warm-up:
model, pools, caches), and every later interval appends to the file the allocations that
grew most since it, by line and by call stack: what a slowly growing resident size is made of.
"""

from __future__ import annotations

import threading
import time
import tracemalloc
from pathlib import Path

FRAMES = 12
TOP_LINES = 25
TOP_STACKS = 5


def start(path: Path, interval: float) -> None:
    tracemalloc.start(FRAMES)
    threading.Thread(target=_run, args=(path, interval), name="lethe-memtrace",
                     daemon=True).start()


def _run(path: Path, interval: float) -> None:
    time.sleep(interval)
    baseline = tracemalloc.take_snapshot()
    started = time.monotonic()
    while True:
        time.sleep(interval)
        snapshot = tracemalloc.take_snapshot()
        with path.open("a") as out:
            elapsed = time.monotonic() - started
            traced, _peak = tracemalloc.get_traced_memory()
            out.write(f"=== {elapsed:.0f} s after the baseline; traced {traced / 2**20:.1f} MB\n")
            for stat in snapshot.compare_to(baseline, "lineno")[:TOP_LINES]:
                out.write(f"{stat}\n")
            for stat in snapshot.compare_to(baseline, "traceback")[:TOP_STACKS]:
                out.write(f"--- {stat.size_diff / 2**10:+.0f} KiB in {stat.count_diff:+d} blocks\n")
                out.writelines(f"    {line}\n" for line in stat.traceback.format())
