"""Concurrent appends of one tenant serialize: one chain, no gaps, no forks."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.audit import service as audit
from app.core import db
from app.core.runtime import get_runtime
from tests.audit.helpers import ACTOR, verify

THREADS = 8
ROUNDS = 5


def test_concurrent_appends_make_one_gapless_valid_chain(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    engine = db.make_engine(get_runtime().app_url, pool_size=THREADS)
    barrier = threading.Barrier(THREADS)

    def writer(n: int) -> list[int]:
        seqs = []
        for round_ in range(ROUNDS):
            with db.session_scope(tenant_id, engine=engine) as session:
                if round_ == 0:
                    barrier.wait(timeout=30)  # every thread holds a transaction, then all race
                event = audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                                     action="memory.transition", target_kind="memory",
                                     target_id=f"thread-{n}", details={"round": round_})
                seqs.append(event.seq)
        return seqs

    try:
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            seqs = [seq for batch in pool.map(writer, range(THREADS)) for seq in batch]
    finally:
        engine.dispose()
    total = THREADS * ROUNDS
    assert sorted(seqs) == list(range(1, total + 1))
    stored = [r[0] for r in owner_conn.execute(
        "SELECT seq FROM audit_event WHERE tenant_id = %s ORDER BY seq", (tenant["id"],))]
    assert stored == list(range(1, total + 1))
    result = verify(tenant_id)
    assert (result.ok, result.events) == (True, total)


def test_an_append_rolled_back_leaves_no_gap(tenant: dict[str, Any]) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    try:
        with db.session_scope(tenant_id) as session:
            audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="memory.transition",
                         target_kind="memory")
            raise RuntimeError("the change it described failed")
    except RuntimeError:
        pass
    with db.session_scope(tenant_id) as session:
        event = audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                             action="memory.transition", target_kind="memory")
    assert event.seq == 1
    assert verify(tenant_id).ok
