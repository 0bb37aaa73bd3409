"""Concurrent appends of one tenant serialize: one chain, no gaps, no forks."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.audit import service as audit
from app.core import db, uow
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
            with uow.unit_of_work(tenant_id, engine=engine) as session:
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
        with uow.unit_of_work(tenant_id) as session:
            audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="memory.transition",
                         target_kind="memory")
            raise RuntimeError("the change it described failed")
    except RuntimeError:
        pass
    with uow.unit_of_work(tenant_id) as session:
        event = audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                             action="memory.transition", target_kind="memory")
    assert event.seq == 1
    assert verify(tenant_id).ok


def test_a_savepoint_rolled_back_takes_its_events_and_the_chain_goes_on(
    tenant: dict[str, Any],
) -> None:
    # The chain head is remembered within a transaction; a rolled-back savepoint must not
    # leave it pointing at an event that no longer exists.
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        first = audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                             action="memory.transition", target_kind="memory")
        savepoint = session.begin_nested()
        audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="memory.transition",
                     target_kind="memory", target_id="undone")
        savepoint.rollback()
        after = audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                             action="memory.transition", target_kind="memory")
    assert (first.seq, after.seq) == (1, 2) and after.prev_hash == first.hash
    assert (verify(tenant_id).ok, verify(tenant_id).events) == (True, 2)


def test_transactions_appending_many_events_each_make_one_chain(
    tenant: dict[str, Any],
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    engine = db.make_engine(get_runtime().app_url, pool_size=4)
    barrier = threading.Barrier(4)

    def writer(n: int) -> None:
        for round_ in range(3):
            with uow.unit_of_work(tenant_id, engine=engine) as session:
                if round_ == 0:
                    barrier.wait(timeout=30)
                for step in range(20):
                    audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                                 action="memory.transition", target_kind="memory",
                                 target_id=f"thread-{n}", details={"step": step})

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(writer, range(4)))
    finally:
        engine.dispose()
    result = verify(tenant_id)
    assert (result.ok, result.events) == (True, 4 * 3 * 20)
