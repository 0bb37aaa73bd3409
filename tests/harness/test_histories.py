"""Model-checked histories: hundreds of random histories of the whole service, each step
followed by the invariants of DESIGN.md checked against the reference model.

`LETHE_HISTORIES` sets how many (300 by default, what CI runs), `LETHE_HISTORY_STEPS` the
steps of each (10). CI's run is derandomized, so it checks the same histories every time;
`scripts/soak` sets `LETHE_HISTORY_SEED` and passes it as `--hypothesis-seed`, for other ones.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.harness.machine import Counts, history_machine

HISTORIES = int(os.environ.get("LETHE_HISTORIES", "300"))
STEPS = int(os.environ.get("LETHE_HISTORY_STEPS", "10"))
SEEDED = "LETHE_HISTORY_SEED" in os.environ
# LETHE_HISTORY_SHRINK=0 reports a failing history as found, without minutes of shrinking.
SHRINK = os.environ.get("LETHE_HISTORY_SHRINK", "1") != "0"

SETTINGS = settings(
    max_examples=HISTORIES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=not SEEDED,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
    phases=[phase for phase in Phase if SHRINK or phase not in (Phase.shrink, Phase.explain)],
)


def test_random_histories_keep_every_invariant(client: Any, owner_conn: Any) -> None:
    started, Counts.histories, Counts.steps = time.monotonic(), 0, 0
    Counts.progress_every = int(os.environ.get("LETHE_HISTORY_PROGRESS", "0"))
    try:
        run_state_machine_as_test(history_machine(client, owner_conn), settings=SETTINGS)
    finally:
        # scripts/soak reads this line.
        print(f"histories: {Counts.histories} steps: {Counts.steps} "
              f"seconds: {time.monotonic() - started:.0f}", file=sys.stderr)
    assert Counts.histories >= min(HISTORIES, 300) or HISTORIES < 300
