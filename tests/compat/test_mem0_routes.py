'''mem0-compatible routes: mem0's own server requests, replayed, answered in mem0's shapes.

The shapes relied on, from mem0's open-source REST server (`server/main.py`) and the
`Memory` class it calls (`mem0/memory/main.py`, `mem0/memory/storage.py`):

    class Message(BaseModel):
        role: str          # "user" or "assistant"
        content: str

    class MemoryCreate(BaseModel):          # POST /memories
        messages: List[Message]
        user_id: Optional[str] = None
        agent_id: Optional[str] = None
        run_id: Optional[str] = None
        metadata: Optional[Dict[str, Any]] = None

    class SearchRequest(BaseModel):         # POST /search
        query: str
        user_id: Optional[str] = None
        run_id: Optional[str] = None
        agent_id: Optional[str] = None
        filters: Optional[Dict[str, Any]] = None

    class MemoryUpdate(BaseModel):          # PUT /memories/{memory_id}
        text: str
        metadata: Optional[Dict[str, Any]] = None

    # add, one memory per message without extraction (infer=False):
    {"results": [{"id": "...", "memory": "...", "event": "ADD"}]}
    # get_all (GET /memories?user_id=) and search (with "score"):
    {"results": [{"id", "memory", "hash", "metadata", "created_at", "updated_at",
                  "user_id", "agent_id", "run_id"}]}
    # GET /memories/{memory_id}/history:
    [{"id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at",
      "is_deleted", "actor_id", "role"}]
    # PUT:    {"message": "Memory updated successfully!"}
    # DELETE /memories/{memory_id}: {"message": "Memory deleted successfully"}
    # DELETE /memories?user_id=:    {"message": "All relevant memories deleted"}
    # (here: 202 and the erasure request it filed)
'''

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.forgetting.dump import database_text

BASE = "/compat/mem0"
MEMORY_ITEM_KEYS = {"id", "memory", "hash", "metadata", "created_at", "updated_at",
                    "user_id", "agent_id", "run_id"}
HISTORY_KEYS = {"id", "memory_id", "old_memory", "new_memory", "event", "created_at",
                "updated_at", "is_deleted", "actor_id", "role"}

ADD_REQUEST = {
    "messages": [
        {"role": "user", "content": "I live in Lisbon and work as a nurse."},
        {"role": "assistant", "content": "Noted, you live in Lisbon."},
        {"role": "user", "content": "My favourite food is grilled sardines."},
    ],
    "user_id": "alice",
    "metadata": {"channel": "chat"},
    # mem0 options Lethe has no use for are ignored, as mem0's models ignore extras.
    "infer": True,
}


def _add(client: Any, tenant: dict[str, Any], body: dict[str, Any] = ADD_REQUEST,
         **headers: str) -> Any:
    return client.post(f"{BASE}/memories", json=body, headers={**tenant["app"], **headers})


def test_add_stores_each_user_message_and_ignores_the_assistant(
    client: Any, tenant: dict[str, Any]
) -> None:
    response = _add(client, tenant)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [(r["memory"], r["event"]) for r in results] == [
        ("I live in Lisbon and work as a nurse.", "ADD"),
        ("My favourite food is grilled sardines.", "ADD")]
    assert all(set(r) == {"id", "memory", "event"} for r in results)
    # The memories are Lethe's own: the native API reads them under the user as subject.
    native = client.get("/v1/memories?subject=alice", headers=tenant["app"]).json()["data"]
    assert sorted(m["text"] for m in native) == sorted(r["memory"] for r in results)
    assert all(m["metadata"] == {"channel": "chat"} for m in native)


def test_get_all_get_and_search_answer_mem0_items(client: Any, tenant: dict[str, Any]) -> None:
    added = _add(client, tenant).json()["results"]
    listed = client.get(f"{BASE}/memories", params={"user_id": "alice"},
                        headers=tenant["app"])
    assert listed.status_code == 200, listed.text
    items = listed.json()["results"]
    assert [i["id"] for i in items] == [a["id"] for a in added]
    for item in items:
        assert set(item) == MEMORY_ITEM_KEYS
        assert item["hash"] == hashlib.md5(item["memory"].encode()).hexdigest()
        assert item["user_id"] == "alice" and item["agent_id"] is None
        assert item["metadata"] == {"channel": "chat"}
    one = client.get(f"{BASE}/memories/{added[1]['id']}", headers=tenant["app"])
    assert one.status_code == 200 and one.json() == items[1]
    found = client.post(f"{BASE}/search", json={"query": "what does alice like to eat?",
                                               "user_id": "alice"}, headers=tenant["app"])
    assert found.status_code == 200, found.text
    results = found.json()["results"]
    assert results[0]["memory"] == "My favourite food is grilled sardines."
    assert set(results[0]) == MEMORY_ITEM_KEYS | {"score"}
    assert results[0]["score"] >= results[-1]["score"]
    # mem0's newer clients name the user inside `filters`; other keys filter on metadata.
    filtered = client.post(f"{BASE}/search", json={
        "query": "sardines", "filters": {"user_id": "alice", "channel": "email"}},
        headers=tenant["app"])
    assert filtered.status_code == 200 and filtered.json()["results"] == []
    other = client.get(f"{BASE}/memories", params={"user_id": "bob"}, headers=tenant["app"])
    assert other.json() == {"results": []}


def test_agent_scopes_apart_from_users(client: Any, tenant: dict[str, Any]) -> None:
    _add(client, tenant, {"messages": [{"role": "user", "content": "Answer in French."}],
                          "agent_id": "support-bot"})
    _add(client, tenant, {"messages": [{"role": "user", "content": "I own a red bicycle."}],
                          "user_id": "alice", "agent_id": "support-bot"})
    _add(client, tenant, {"messages": [{"role": "user", "content": "I own a blue car."}],
                          "user_id": "alice"})
    agent = client.get(f"{BASE}/memories", params={"agent_id": "support-bot"},
                       headers=tenant["app"]).json()["results"]
    assert [(i["memory"], i["user_id"], i["agent_id"]) for i in agent] == [
        ("Answer in French.", None, "support-bot")]
    both = client.get(f"{BASE}/memories", params={"user_id": "alice", "agent_id": "support-bot"},
                      headers=tenant["app"]).json()["results"]
    assert [(i["memory"], i["agent_id"], i["metadata"]) for i in both] == [
        ("I own a red bicycle.", "support-bot", None)]
    user = client.get(f"{BASE}/memories", params={"user_id": "alice"},
                      headers=tenant["app"]).json()["results"]
    assert len(user) == 2


def test_update_appends_a_version_that_history_shows(client: Any, tenant: dict[str, Any]) -> None:
    [first, _] = _add(client, tenant).json()["results"]
    put = client.put(f"{BASE}/memories/{first['id']}",
                     json={"text": "I live in Porto and work as a nurse."},
                     headers=tenant["app"])
    assert put.status_code == 200 and put.json() == {"message": "Memory updated successfully!"}
    item = client.get(f"{BASE}/memories/{first['id']}", headers=tenant["app"]).json()
    assert item["memory"] == "I live in Porto and work as a nurse."
    assert item["metadata"] == {"channel": "chat"}, "a PUT without metadata keeps it"
    history = client.get(f"{BASE}/memories/{first['id']}/history", headers=tenant["app"])
    assert history.status_code == 200
    rows = history.json()
    assert all(set(row) == HISTORY_KEYS for row in rows)
    assert [(r["event"], r["old_memory"], r["new_memory"]) for r in rows] == [
        ("ADD", None, "I live in Lisbon and work as a nurse."),
        ("UPDATE", "I live in Lisbon and work as a nurse.",
         "I live in Porto and work as a nurse.")]
    assert all(r["memory_id"] == first["id"] and r["is_deleted"] is False for r in rows)
    native = client.get(f"/v1/memories/{first['id']}", headers=tenant["app"])
    assert native.headers["ETag"] == '"2"'


def test_adds_and_updates_are_audited_with_the_key_and_the_version(
    client: Any, tenant: dict[str, Any]
) -> None:
    [first, second] = _add(client, tenant).json()["results"]
    client.put(f"{BASE}/memories/{first['id']}", json={"text": "I live in Porto."},
               headers=tenant["app"])
    trail = client.get("/v1/audit", headers=tenant["compliance"]).json()["data"]
    content = [(e["action"], e["target_id"], e["details"]["version"]) for e in trail
               if e["action"] in ("memory.created", "memory.corrected")]
    assert content == [("memory.created", first["id"], 1), ("memory.created", second["id"], 1),
                       ("memory.corrected", first["id"], 2)]
    assert len({e["actor"] for e in trail if e["target_id"] == first["id"]}) == 1
    assert "Lisbon" not in str(trail) and "Porto" not in str(trail)


def test_delete_forgets_through_the_one_forget(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    [first, second] = _add(client, tenant).json()["results"]
    deleted = client.delete(f"{BASE}/memories/{first['id']}", headers=tenant["app"])
    assert deleted.status_code == 200
    assert deleted.json() == {"message": "Memory deleted successfully"}
    assert client.get(f"{BASE}/memories/{first['id']}", headers=tenant["app"]).status_code == 404
    assert client.get(f"/v1/memories/{first['id']}", headers=tenant["app"]).status_code == 404
    listed = client.get(f"{BASE}/memories", params={"user_id": "alice"},
                        headers=tenant["app"]).json()["results"]
    assert [i["id"] for i in listed] == [second["id"]]
    assert "Lisbon" not in database_text(owner_conn)


def test_a_forget_request_in_the_conversation_forgets(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    assert client.patch("/v1/settings", json={"detect_forget_requests": True},
                        headers=tenant["compliance"]).status_code == 200
    [lisbon, sardines] = _add(client, tenant).json()["results"]
    forget = _add(client, tenant, {"user_id": "alice", "messages": [
        {"role": "user", "content": "Please forget that I like grilled sardines."}]})
    assert forget.status_code == 200, forget.text
    assert forget.json()["results"] == [
        {"id": sardines["id"], "memory": None, "event": "DELETE"}]
    listed = client.get(f"{BASE}/memories", params={"user_id": "alice"},
                        headers=tenant["app"]).json()["results"]
    assert [i["id"] for i in listed] == [lisbon["id"]]
    dump = database_text(owner_conn)
    # The retraction keeps what was forgotten as asked (`retractions.keep_about`), no more.
    assert "favourite food" not in dump and "Please forget" not in dump


def test_delete_all_files_an_erasure_request(client: Any, tenant: dict[str, Any]) -> None:
    _add(client, tenant)
    filed = client.delete(f"{BASE}/memories", params={"user_id": "alice"},
                          headers=tenant["app"])
    assert filed.status_code == 202, filed.text
    request = filed.json()["erasure_request"]
    assert filed.headers["Location"] == f"/v1/erasure-requests/{request['id']}"
    assert request["subject"] == "alice" and request["status"] == "pending"
    polled = client.get(f"/v1/erasure-requests/{request['id']}", headers=tenant["app"])
    assert polled.status_code == 200 and polled.json()["id"] == request["id"]
    again = client.delete(f"{BASE}/memories", params={"user_id": "alice"},
                          headers=tenant["app"])
    assert again.status_code == 200 and again.json()["erasure_request"]["id"] == request["id"]
    narrower = client.delete(f"{BASE}/memories", params={"user_id": "alice", "agent_id": "bot"},
                             headers=tenant["app"])
    assert narrower.status_code == 422


def test_requests_without_a_usable_identifier_are_refused(
    client: Any, tenant: dict[str, Any]
) -> None:
    nobody = {"messages": [{"role": "user", "content": "I like tea."}]}
    assert _add(client, tenant, nobody).status_code == 422
    # A run alone names no subject: Lethe keeps memories by whom they are about.
    run = _add(client, tenant, {**nobody, "run_id": "run-1"})
    assert run.status_code == 422 and "run_id" in run.text
    assert client.get(f"{BASE}/memories", headers=tenant["app"]).status_code == 422
    assert client.get("/v1/memories?subject=alice", headers=tenant["app"]).json()["data"] == []


def test_an_app_key_is_required(client: Any, tenant: dict[str, Any]) -> None:
    assert client.post(f"{BASE}/memories", json=ADD_REQUEST).status_code == 401
    assert client.get(f"{BASE}/memories", params={"user_id": "alice"}).status_code == 401


def test_replayed_add_keeps_ids_and_no_texts(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = _add(client, tenant, **{"Idempotency-Key": "mem0-add-1"})
    again = _add(client, tenant, **{"Idempotency-Key": "mem0-add-1"})
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert [r["id"] for r in again.json()["results"]] == [
        r["id"] for r in first.json()["results"]]
    assert all(r["memory"] is None for r in again.json()["results"])
    native = client.get("/v1/memories?subject=alice", headers=tenant["app"]).json()["data"]
    assert len(native) == 2, "the replay stored nothing more"
    stored = owner_conn.execute(
        "SELECT response_body::text FROM operation WHERE idempotency_key = 'mem0-add-1'"
    ).fetchone()[0]
    assert "Lisbon" not in stored


def test_a_run_is_a_session_of_working_memories_and_deleting_it_closes_it(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    [durable, _] = _add(client, tenant).json()["results"]
    [scratch] = _add(client, tenant, {"user_id": "alice", "run_id": "run-7", "messages": [
        {"role": "user", "content": "For this trip I am booking a hotel in Rome."}]}
    ).json()["results"]
    native = client.get(f"/v1/memories/{scratch['id']}", headers=tenant["app"]).json()
    assert native["session"] == "run-7" and native["volatility"] == "working"
    run = client.get(f"{BASE}/memories", params={"user_id": "alice", "run_id": "run-7"},
                     headers=tenant["app"]).json()["results"]
    assert [(i["id"], i["run_id"]) for i in run] == [(scratch["id"], "run-7")]
    found = client.post(f"{BASE}/search", json={"query": "hotel", "user_id": "alice",
                                               "run_id": "run-7"}, headers=tenant["app"])
    assert [r["id"] for r in found.json()["results"]] == [scratch["id"]]
    closed = client.delete(f"{BASE}/memories", params={"user_id": "alice", "run_id": "run-7"},
                           headers=tenant["app"])
    assert closed.status_code == 200, closed.text
    assert closed.json()["session"]["evicted"] == [scratch["id"]]
    left = client.get(f"{BASE}/memories", params={"user_id": "alice"},
                      headers=tenant["app"]).json()["results"]
    assert scratch["id"] not in {i["id"] for i in left} and durable["id"] in {
        i["id"] for i in left}
    assert "hotel in Rome" not in database_text(owner_conn)


def test_expiration_date_leaves_search_and_list_at_the_instant(
    client: Any, tenant: dict[str, Any]
) -> None:
    """mem0's `expiration_date`: a time is Lethe's `expires_at`; a day holds through it."""
    lasting = _add(client, tenant, {
        "messages": [{"role": "user", "content": "My hotel loyalty card is Marriott."}],
        "user_id": "alice"}).json()["results"][0]
    until = datetime.now(UTC) + timedelta(seconds=3)
    expiring = _add(client, tenant, {
        "messages": [{"role": "user", "content": "My hotel in Tokyo is the Park Hyatt."}],
        "user_id": "alice", "expiration_date": until.isoformat()}).json()["results"][0]
    day = _add(client, tenant, {
        "messages": [{"role": "user", "content": "My hotel room number is 1204."}],
        "user_id": "bob", "expiration_date": "2999-12-31"}).json()["results"][0]
    stored = client.get(f"/v1/memories/{day['id']}", headers=tenant["app"]).json()
    assert stored["expires_at"].startswith("3000-01-01T00:00:00")
    past = _add(client, tenant, {"messages": [{"role": "user", "content": "Old news."}],
                                 "user_id": "alice", "expiration_date": "2000-01-01"})
    assert past.status_code == 422

    def searched() -> set[str]:
        found = client.post(f"{BASE}/search", json={"query": "hotel", "user_id": "alice"},
                            headers=tenant["app"])
        return {r["id"] for r in found.json()["results"]}

    def listed() -> set[str]:
        items = client.get(f"{BASE}/memories", params={"user_id": "alice"},
                           headers=tenant["app"]).json()["results"]
        return {i["id"] for i in items}

    assert searched() == listed() == {expiring["id"], lasting["id"]}
    time.sleep(max(0.0, (until - datetime.now(UTC)).total_seconds()) + 0.05)
    assert searched() == listed() == {lasting["id"]}
