"""POST /v1/memories/{id}/forget and DELETE: the two switches, tombstones, retractions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.forgetting.dump import database_text

SECRET = "Quetzalcoatlus"


def _remember(client: Any, headers: dict[str, str], text: str = f"My cat is named {SECRET}.",
              **extra: Any) -> dict[str, Any]:
    body = {"subject": "user:7", "text": text, "source": "conversation:81", **extra}
    response = client.post("/v1/memories", json=body, headers=headers)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def _forget(client: Any, headers: dict[str, str], memory_id: str, **body: Any) -> Any:
    return client.post(f"/v1/memories/{memory_id}/forget", json=body, headers=headers)


def test_default_forget_tombstones_and_excludes_the_source(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = _remember(client, tenant["app"], metadata={"note": SECRET}, key="cat_name")
    patched = client.patch(f"/v1/memories/{memory['id']}", json={"text": f"{SECRET} is 3."},
                           headers={**tenant["app"], "If-Match": '"1"',
                                    "Idempotency-Key": "edit-1"})
    assert patched.status_code == 200
    answer = _forget(client, tenant["app"], memory["id"], about="my cat's name")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["forgotten"] is True and body["excluded_source"] == "conversation:81"
    assert body["retraction_id"]
    assert client.get(f"/v1/memories/{memory['id']}", headers=tenant["app"]).status_code == 404
    assert client.get("/v1/memories?subject=user:7", headers=tenant["app"]).json()["data"] == []
    recalled = client.post("/v1/recall", json={"subject": "user:7", "query": "cat name"},
                           headers=tenant["app"]).json()
    assert recalled["results"] == []
    assert [(r["about"], r["memory_count"]) for r in recalled["retractions"]] == [
        ("my cat's name", 1)]
    assert SECRET not in database_text(owner_conn)
    state = owner_conn.execute("SELECT state FROM memory WHERE id = %s", (memory["id"],))
    assert state.fetchone()[0] == "forgotten"  # the tombstone keeps the ID


def test_forgotten_memory_cannot_be_edited(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"])
    _forget(client, tenant["app"], memory["id"])
    edit = client.patch(f"/v1/memories/{memory['id']}", json={"text": "x"},
                        headers={**tenant["app"], "If-Match": '"2"'})
    assert edit.status_code == 404
    revert = client.post(f"/v1/memories/{memory['id']}/revert", json={"seq": 1},
                         headers={**tenant["app"], "If-Match": '"2"'})
    assert revert.status_code == 404


def test_delete_only_lets_the_source_bring_it_back(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"])
    body = _forget(client, tenant["app"], memory["id"], exclude_source=False).json()
    assert body["forgotten"] is True and body["excluded_source"] is None
    again = client.post("/v1/memories", json={"subject": "user:7", "text": "I have a dog.",
                                               "source": "conversation:81"},
                        headers=tenant["app"])
    assert again.status_code == 201


def test_exclude_only_keeps_the_memory(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"])
    body = _forget(client, tenant["app"], memory["id"], delete=False).json()
    assert body["forgotten"] is False and body["excluded_source"] == "conversation:81"
    assert client.get(f"/v1/memories/{memory['id']}", headers=tenant["app"]).status_code == 200
    refused = client.post("/v1/memories", json={"subject": "user:7", "text": "Another fact.",
                                                 "source": "conversation:81"},
                          headers=tenant["app"])
    assert refused.status_code == 409
    assert refused.json()["type"] == "https://lethe.dev/problems/source-excluded"


def test_switch_combinations_that_forget_nothing_are_422(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = _remember(client, tenant["app"])
    both_off = _forget(client, tenant["app"], memory["id"], delete=False, exclude_source=False)
    assert both_off.status_code == 422
    sourceless = client.post("/v1/memories", json={"subject": "user:7", "text": "No source."},
                             headers=tenant["app"]).json()
    exclude_only = _forget(client, tenant["app"], sourceless["id"], delete=False)
    assert exclude_only.status_code == 422
    assert client.get(f"/v1/memories/{memory['id']}", headers=tenant["app"]).status_code == 200


def test_forgetting_twice_says_already_forgotten(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"])
    assert _forget(client, tenant["app"], memory["id"]).json()["already_forgotten"] is False
    second = _forget(client, tenant["app"], memory["id"])
    assert second.status_code == 200
    assert second.json()["already_forgotten"] is True


def test_delete_is_204_twice_and_404_for_unknown_or_foreign(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    memory = _remember(client, tenant["app"])
    foreign = client.delete(f"/v1/memories/{memory['id']}", headers=other_tenant["app"])
    assert foreign.status_code == 404
    assert client.delete(f"/v1/memories/{memory['id']}", headers=tenant["app"]).status_code == 204
    assert client.delete(f"/v1/memories/{memory['id']}", headers=tenant["app"]).status_code == 204
    unknown = client.delete("/v1/memories/00000000-0000-0000-0000-000000000000",
                            headers=tenant["app"])
    assert unknown.status_code == 404


def test_forget_is_audited_without_content(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = _remember(client, tenant["app"])
    _forget(client, tenant["app"], memory["id"], reason="ticket 991")
    events = client.get(f"/v1/audit?target_id={memory['id']}", headers=tenant["compliance"])
    assert events.status_code == 200
    moves = [(e["action"], e["from_state"], e["to_state"]) for e in events.json()["data"]]
    assert ("memory.transition", "active", "forgotten") in moves
    assert client.get("/v1/audit/verify", headers=tenant["compliance"]).json()["ok"] is True


@pytest.mark.parametrize("body", [{"about": ""}, {"delete": "yes"}, {"surprise": 1},
                                  {"about": "x" * 201}])
def test_bad_forget_bodies_are_422(client: Any, tenant: dict[str, Any],
                                   body: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"])
    assert _forget(client, tenant["app"], memory["id"], **body).status_code == 422
