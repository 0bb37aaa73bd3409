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
