"""Model-checked histories with recall on a replica whose replay delay changes at random: no
recall returns a memory forgotten before it began (tests/harness: after every step that
changed a subject with dead memories, recall is asked with their words, and every result must
be live in the model). Memory GETs stay on the primary here: the machine reads what it has
just written, which a lagging replica may not show yet."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule, run_state_machine_as_test

from bench.standby import Standby
from tests.harness.machine import history_machine
from tests.harness.test_histories import SETTINGS
from tests.replicas.conftest import counted

# Few by default (each history makes a tenant and recalls through the replica after every
# step); the nightly run sets the harness's size.
HISTORIES = int(os.environ.get("LETHE_REPLICA_HISTORIES", "8"))
DELAYS = ["0", "20ms", "200ms", "1s"]


def test_histories_on_a_lagging_replica_never_recall_the_forgotten(
    client: Any, owner_conn: Any, standby: Standby, use_replica: Callable[..., None],
) -> None:
    use_replica(gets=False, fence=os.environ.get("LETHE_REPLICA_FENCE_OFF") != "1")
    served = counted("lethe_replica_reads_total", server="replica")
    base = history_machine(client, owner_conn)

    class ReplicatedHistory(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            # Each history starts on a replica that keeps up, so its recalls are served there
            # until a step makes it lag (whichever steps the histories draw).
            standby.set_apply_delay("0")
            super().__init__()

        @rule(delay=st.sampled_from(DELAYS))
        def replica_lags(self, delay: str) -> None:
            standby.set_apply_delay(delay)

    try:
        run_state_machine_as_test(ReplicatedHistory,
                                  settings=SETTINGS.__class__(SETTINGS, max_examples=HISTORIES))
    finally:
        standby.set_apply_delay("2s")
    assert counted("lethe_replica_reads_total", server="replica") > served
