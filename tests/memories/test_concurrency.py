from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.memories.helpers import count, created


def test_concurrent_edits_with_one_revision_let_exactly_one_win(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = created(client, tenant["app"])
    headers = {**tenant["app"], "If-Match": '"1"'}

    def edit(n: int) -> int:
        response = client.patch(f"/v1/memories/{memory['id']}", json={"text": f"edit {n}"},
                                headers=headers)
        return int(response.status_code)

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = sorted(pool.map(edit, range(6)))
    assert statuses == [200] + [412] * 5
    read = client.get(f"/v1/memories/{memory['id']}", headers=tenant["app"]).json()
    assert read["revision"] == 2
    assert count(owner_conn, "memory_version") == 2


def test_concurrent_first_writes_to_one_slot_make_one_memory(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    def write(n: int) -> tuple[int, str]:
        response = client.post("/v1/memories", headers=tenant["app"],
                               json={"subject": "user:42", "key": "city", "text": f"city {n}"})
        return int(response.status_code), str(response.json()["id"])

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(write, range(6)))
    assert sorted(status for status, _ in results) == [200] * 5 + [201]
    assert len({memory_id for _, memory_id in results}) == 1
    assert count(owner_conn, "memory") == 1
    assert owner_conn.execute("SELECT revision FROM memory").fetchone()[0] == 6
    assert count(owner_conn, "memory_version") == 6


def test_a_write_picked_as_deadlock_victim_runs_again(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    """Another transaction holds the tenant's audit chain (as ingestion does) and then wants a
    row the write has locked: PostgreSQL aborts the write, which is run again, not a 500."""
    import threading
    import time
    import uuid

    from sqlalchemy import text

    from app.audit import service as audit
    from app.core import uow

    old = created(client, tenant["app"], subject="user:dl", text="My phone number is 555-1234.")
    tenant_id = uuid.UUID(tenant["id"])
    holding = threading.Event()
    errors: list[BaseException] = []

    def hold_chain_then_want_the_row() -> None:
        try:
            with uow.unit_of_work(tenant_id) as session:
                audit.record(session, tenant_id=tenant_id, actor="system:test",
                             action="test.hold", target_kind="memory")
                holding.set()
                # The write locks the old memory, then waits for the chain; wanting the row
                # as soon as it waits closes the cycle before its deadlock check (1 s) runs.
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not owner_conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                ).fetchone()[0]:
                    time.sleep(0.01)
                session.execute(text("SELECT id FROM memory WHERE id = :id FOR UPDATE"),
                                {"id": old["id"]})
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    other = threading.Thread(target=hold_chain_then_want_the_row)
    other.start()
    assert holding.wait(10)
    response = client.post("/v1/memories", json={"subject": "user:dl",
                                                 "text": "My phone number is 555-9876."},
                           headers=tenant["app"])
    other.join(30)
    assert errors == []  # the write was the victim, and the other transaction committed
    assert response.status_code == 201, response.text
    assert response.json()["effects"]["suspected"] == [old["id"]]
