"""No replay, redelivery or race brings back what was forgotten or undoes a later change."""

from __future__ import annotations

import uuid
from typing import Any

from app.idempotency import tasks as idempotency_tasks
from tests.concurrency import together
from tests.forgetting.dump import database_text

REPLAYED = "Idempotent-Replayed"


def _create(client: Any, headers: dict[str, str], idempotency_key: str, text: str,
            **extra: Any) -> Any:
    return client.post("/v1/memories", json={"subject": "user:9", "text": text, **extra},
                       headers={**headers, "Idempotency-Key": idempotency_key})


def _gone(client: Any, headers: dict[str, str], memory_id: str, word: str) -> None:
    assert client.get(f"/v1/memories/{memory_id}", headers=headers).status_code == 404
    listed = client.get("/v1/memories?subject=user:9", headers=headers).json()["data"]
    assert memory_id not in [m["id"] for m in listed]
    for mode in ("hybrid", "vector", "keyword"):
        results = client.post("/v1/recall", json={"subject": "user:9", "query": word,
                                                   "mode": mode}, headers=headers).json()
        assert memory_id not in [r["memory"]["id"] for r in results["results"]]


def test_a_replayed_create_after_forget_does_not_resurrect(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = _create(client, tenant["app"], "create-a", "I was born in Valparaiso.")
    memory_id = first.json()["id"]
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
    replay = _create(client, tenant["app"], "create-a", "I was born in Valparaiso.")
    assert replay.status_code == 201 and replay.headers[REPLAYED] == "true"
    assert replay.json() == {"id": memory_id, "state": "forgotten"}
    _gone(client, tenant["app"], memory_id, "Valparaiso birthplace")
    assert "Valparaiso" not in database_text(owner_conn)


def test_b_redelivery_after_the_operation_record_was_pruned_does_not_resurrect(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id = _create(client, tenant["app"], "create-b", "I was born in Valparaiso.").json()["id"]
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
    owner_conn.execute("UPDATE operation SET expires_at = now() - interval '1 day'")
    assert idempotency_tasks.prune_operations() >= 1
    late = _create(client, tenant["app"], "create-b", "I was born in Valparaiso.")
    assert late.status_code == 201 and REPLAYED not in late.headers
    assert late.json() == {"id": memory_id, "state": "forgotten"}
    _gone(client, tenant["app"], memory_id, "Valparaiso birthplace")
    assert "Valparaiso" not in database_text(owner_conn)
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 1


def test_e_forget_racing_a_second_delivery_always_ends_forgotten(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    for round_ in range(40):
        key = f"race-{round_}"
        text = f"Locker code {round_} is Xylophone{round_}."
        memory_id = _create(client, tenant["app"], key, text).json()["id"]

        def forget(memory_id: str = memory_id) -> int:
            status: int = client.delete(f"/v1/memories/{memory_id}",
                                        headers=tenant["app"]).status_code
            return status

        def redeliver(key: str = key, text: str = text) -> int:
            status: int = _create(client, tenant["app"], key, text).status_code
            return status

        deleted, redelivered = together(forget, redeliver)
        assert deleted == 204
        assert redelivered in (201, 409)  # 409: the delete held the key's lock
        state = owner_conn.execute("SELECT state FROM memory WHERE id = %s", (memory_id,))
        assert state.fetchone()[0] == "forgotten", round_
        assert client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 404
    assert "Xylophone" not in database_text(owner_conn)


def test_f_replayed_corrections_never_roll_back_later_ones(
    client: Any, tenant: dict[str, Any]
) -> None:
    created = _create(client, tenant["app"], "create-f", "Favourite number: 0.").json()
    memory_id, revision = created["id"], created["revision"]
    early_key, early_body = "", {}
    for n in range(1, 81):
        key, body = f"fix-{n}", {"text": f"Favourite number: {n}."}
        response = client.patch(f"/v1/memories/{memory_id}", json=body,
                                headers={**tenant["app"], "If-Match": f'"{revision}"',
                                         "Idempotency-Key": key})
        assert response.status_code == 200, response.text
        revision = response.json()["revision"]
        if n == 3:
            early_key, early_body = key, body
    replay = client.patch(f"/v1/memories/{memory_id}", json=early_body,
                          headers={**tenant["app"], "If-Match": '"3"',
                                   "Idempotency-Key": early_key})
    assert replay.status_code == 200 and replay.headers[REPLAYED] == "true"
    assert _create(client, tenant["app"], "create-f", "Favourite number: 0.").headers[REPLAYED]
    current = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    assert current["text"] == "Favourite number: 80."
    assert current["revision"] == revision == 81


def test_g_replayed_create_of_a_superseded_memory_stays_out_of_recall(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = _create(client, tenant["app"], "create-g", "I live in Berlin.").json()
    new = client.post("/v1/memories", json={"subject": "user:9", "text": "I live in Lisbon.",
                                             "supersedes": [old["id"]]},
                      headers=tenant["app"]).json()
    replay = _create(client, tenant["app"], "create-g", "I live in Berlin.")
    assert replay.headers[REPLAYED] == "true"
    results = client.post("/v1/recall", json={"subject": "user:9", "query": "Berlin home city"},
                          headers=tenant["app"]).json()["results"]
    assert [r["memory"]["id"] for r in results] == [new["id"]]
    assert [h["id"] for h in results[0]["history"]] == [old["id"]]
    assert client.get(f"/v1/memories/{old['id']}", headers=tenant["app"]).json()["state"] == (
        "deprecated")


def test_replayed_forget_changes_nothing_more(client: Any, tenant: dict[str, Any]) -> None:
    memory_id = _create(client, tenant["app"], "create-h", "Gate code 1234.").json()["id"]
    headers = {**tenant["app"], "Idempotency-Key": "forget-h"}
    first = client.post(f"/v1/memories/{memory_id}/forget", json={}, headers=headers)
    again = client.post(f"/v1/memories/{memory_id}/forget", json={}, headers=headers)
    assert again.headers[REPLAYED] == "true" and again.json() == first.json()
    recalled = client.post("/v1/recall", json={"subject": "user:9", "query": "gate"},
                           headers=tenant["app"]).json()
    assert len(recalled["retractions"]) == 1
    assert uuid.UUID(first.json()["retraction_id"])


def test_slot_write_redelivered_after_its_record_expired_adds_no_version(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = _create(client, tenant["app"], "slot-1", "I live in Berlin.", key="home").json()
    second = _create(client, tenant["app"], "slot-2", "I live in Lisbon.", key="home")
    assert second.status_code == 200 and second.json()["id"] == first["id"]
    owner_conn.execute("UPDATE operation SET expires_at = now() - interval '1 day'")
    assert idempotency_tasks.prune_operations() == 2
    late = _create(client, tenant["app"], "slot-2", "I live in Lisbon.", key="home")
    assert REPLAYED not in late.headers
    assert late.json()["id"] == first["id"] and late.json()["revision"] == 2
    versions = client.get(f"/v1/memories/{first['id']}/versions", headers=tenant["app"])
    assert [v["text"] for v in versions.json()["data"]] == ["I live in Berlin.",
                                                            "I live in Lisbon."]
