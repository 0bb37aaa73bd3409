"""Recall's contract: current versions only, state rules, isolation, no stale views."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core import db, uow
from app.keys import digests
from app.memories.lifecycle import transition
from app.memories.models import Memory, MemoryState


def _remember(client: Any, headers: dict[str, str], text: str, **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/memories", json={"subject": "user:1", "text": text, **extra},
                           headers=headers)
    assert response.status_code in (200, 201), response.text
    body: dict[str, Any] = response.json()
    return body


def _recall(client: Any, headers: dict[str, str], query: str, **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/recall", json={"subject": "user:1", "query": query, **extra},
                           headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _move(tenant: dict[str, Any], memory_id: str, state: MemoryState) -> None:
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        row = session.get(Memory, uuid.UUID(memory_id))
        assert row is not None
        transition(session, row, state, reason="test", actor="system:test")


def test_recall_finds_by_meaning_and_shapes_results(client: Any, tenant: dict[str, Any]) -> None:
    city = _remember(client, tenant["app"], "I live in Lisbon, near the river.")
    _remember(client, tenant["app"], "My favourite drink is green tea.")
    body = _recall(client, tenant["app"], "which city is home?", limit=1)
    assert [r["memory"]["id"] for r in body["results"]] == [city["id"]]
    result = body["results"][0]
    assert result["score"] > 0 and result["flags"] == [] and result["history"] == []
    assert result["memory"]["text"] == "I live in Lisbon, near the river."
    assert body["retractions"] == []


def test_only_current_versions_are_searched(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"], "I drive a red bicycle to work.")
    patched = client.patch(f"/v1/memories/{memory['id']}",
                           json={"text": "I take the tram to work."},
                           headers={**tenant["app"], "If-Match": f'"{memory["revision"]}"'})
    assert patched.status_code == 200
    body = _recall(client, tenant["app"], "red bicycle", mode="keyword")
    assert body["results"] == []
    body = _recall(client, tenant["app"], "how do I commute?")
    assert body["results"][0]["memory"]["text"] == "I take the tram to work."


def test_deprecated_memory_appears_only_as_history(client: Any, tenant: dict[str, Any]) -> None:
    old = _remember(client, tenant["app"], "I live in Berlin.")
    new = _remember(client, tenant["app"], "I live in Lisbon now.", supersedes=[old["id"]])
    body = _recall(client, tenant["app"], "where do I live? Berlin?")
    ids = [r["memory"]["id"] for r in body["results"]]
    assert old["id"] not in ids
    assert ids[0] == new["id"]
    history = body["results"][0]["history"]
    assert [h["id"] for h in history] == [old["id"]]
    assert history[0]["state"] == "deprecated"
    assert history[0]["superseded_by"] == new["id"]


def test_suspect_is_flagged_and_can_be_excluded(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"], "My manager is called Priya.")
    _move(tenant, memory["id"], MemoryState.suspect)
    body = _recall(client, tenant["app"], "who is my boss?")
    assert body["results"][0]["flags"] == ["suspect"]
    assert body["results"][0]["memory"]["state"] == "suspect"
    assert _recall(client, tenant["app"], "who is my boss?", include_suspect=False)[
        "results"] == []


def test_quarantined_is_never_recalled(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant["app"], "My passport number ends in 4471.")
    _move(tenant, memory["id"], MemoryState.quarantined)
    for mode in ("hybrid", "vector", "keyword"):
        assert _recall(client, tenant["app"], "passport 4471", mode=mode)["results"] == []


def test_other_tenants_memories_are_invisible(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    _remember(client, tenant["app"], "I am allergic to peanuts.")
    assert _recall(client, other_tenant["app"], "allergies peanuts")["results"] == []


def test_recall_reads_the_database_not_a_process_cache(
    app: Any, client: Any, tenant: dict[str, Any]
) -> None:
    from app.main import create_app

    with TestClient(create_app()) as second_process:
        assert _recall(second_process, tenant["app"], "what pet do I have?")["results"] == []
        _remember(client, tenant["app"], "I have a grey cat named Miso.")
        found = _recall(second_process, tenant["app"], "what pet do I have?")["results"]
        assert found and found[0]["memory"]["text"] == "I have a grey cat named Miso."


@pytest.mark.parametrize("body", [
    {"subject": "user:1", "query": "x", "limit": 0},
    {"subject": "user:1", "query": "x", "limit": 101},
    {"subject": "user:1", "query": ""},
    {"query": "x"},
    {"subject": "user:1", "query": "x", "mode": "magic"},
    {"subject": "user:1", "query": "x", "include_suspect": "yes"},
])
def test_bad_recall_requests_are_422(client: Any, tenant: dict[str, Any],
                                     body: dict[str, Any]) -> None:
    response = client.post("/v1/recall", json=body, headers=tenant["app"])
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")


def test_a_memory_forgotten_after_the_keyword_read_is_not_returned(
    client: Any, tenant: dict[str, Any]
) -> None:
    """The result load re-checks state: a candidate forgotten after its list was read is dropped."""
    from app.embeddings.runtime import embedder
    from app.forgetting.forget import forget_one
    from app.memories import search_terms
    from app.recall import candidates, service, working
    from app.recall.schemas import RecallRequest

    gone = _remember(client, tenant["app"], "My locker code at the ZX-400 gym is 4471.")
    kept = _remember(client, tenant["app"], "I renewed the ZX-400 gym membership in May.")
    tenant_id = uuid.UUID(tenant["id"])
    request = RecallRequest(subject="user:1", query="ZX-400 gym locker code")
    stored = digests.subject_digest(tenant_id, "user:1")  # as the memories store it
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        terms = search_terms.query_terms(conn, tenant_id=tenant_id, subject=stored,
                                         query=request.query)
        found = candidates.send(conn, subject=stored, states=["active"], n=40,
                                embedding=embedder().embed_one(request.query),
                                terms=terms).result()
    assert found.keyword is not None
    assert uuid.UUID(gone["id"]) in [memory_id for memory_id, _ in found.keyword]
    with uow.unit_of_work(tenant_id) as session:
        row = session.get(Memory, uuid.UUID(gone["id"]))
        assert row is not None
        forget_one(session, row, reason="test", actor="system:test")
    with db.read_pipeline(tenant_id) as conn:
        clock = working.clock(working.send(conn, tenant_id=tenant_id))
        answer = service.results(conn, request=request, found=found, retracted=[], clock=clock)
    ids = [str(result.memory.id) for result in answer.results]
    assert gone["id"] not in ids and kept["id"] in ids


def test_recall_refuses_a_missing_or_unknown_key(client: Any, tenant: dict[str, Any]) -> None:
    """The key is checked while the query embeds (the route starts the embedding first), and
    a refused one still gets its problem answer, never results."""
    _remember(client, tenant["app"], "I live in Lisbon, near the river.")
    for headers in ({}, {"Authorization": "Bearer lethe_not-a-key"}):
        response = client.post("/v1/recall", headers=headers,
                               json={"subject": "user:1", "query": "which city is home?"})
        assert response.status_code == 401, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert "results" not in response.json()


@pytest.mark.parametrize("size", ["small", "larger", "large"])
def test_the_keyword_list_is_read_while_the_query_embeds_and_no_connection_waits_for_it(
    client: Any, tenant: dict[str, Any], monkeypatch: pytest.MonkeyPatch, size: str
) -> None:
    """Given a query still being embedded, recall reads a small subject whole (and ranks its
    keyword list here) or a larger one's keyword list from the database, in a transaction
    that has ended, its connection back in the pool, when the vector is awaited; the
    database's vector list, if any, comes after. A large subject's vector list goes out on
    another connection once the vector is there, before the keyword list is awaited."""
    from concurrent.futures import Future

    from app.embeddings.runtime import embedder
    from app.recall import bm25_lists, candidates, service, small_subjects
    from app.recall.schemas import RecallRequest

    locker = _remember(client, tenant["app"], "My locker code at the ZX-400 gym is 4471.")
    request = RecallRequest(subject="user:1", query="ZX-400 gym locker code")
    events: list[str] = []
    vector_sent = threading.Event()
    send, send_rows, send_size = candidates.send, small_subjects.send, candidates.send_size
    send_keyword = bm25_lists.send

    class WatchedLists(candidates.PendingLists):
        def result(self) -> candidates.Lists:
            if self.keyword is not None:
                # Long enough for a vector list sent beside this one to go out first.
                vector_sent.wait(timeout=0 if size != "large" else 10)
                events.append("await keyword")
            return super().result()

    def watched_send(conn: Any, **ask: Any) -> Any:
        vector = ask.get("embedding") is not None
        events.append("vector" if vector else "keyword")
        pending = send(conn, **ask)
        if vector:
            vector_sent.set()
        return WatchedLists(pending.vector, pending.keyword)

    def watched_send_keyword(conn: Any, **ask: Any) -> Any:
        events.append("keyword")
        pending = send_keyword(conn, **ask)
        return WatchedLists(pending.vector, pending.keyword)

    def watched_send_rows(conn: Any, **ask: Any) -> Any:
        events.append("subject's rows")
        return send_rows(conn, **ask)

    def watched_send_size(conn: Any, **ask: Any) -> Any:
        events.append("size")
        return send_size(conn, **ask)

    class WatchedFuture(Future[list[float]]):
        def result(self, timeout: float | None = None) -> list[float]:
            checked_out = db.app_engine().pool.checkedout()  # type: ignore[attr-defined]
            events.append(f"await vector, {checked_out} connections out")
            return super().result(timeout)

    monkeypatch.setattr(candidates, "send", watched_send)
    monkeypatch.setattr(bm25_lists, "send", watched_send_keyword)
    monkeypatch.setattr(small_subjects, "send", watched_send_rows)
    monkeypatch.setattr(candidates, "send_size", watched_send_size)
    if size != "small":
        monkeypatch.setattr(small_subjects, "RANK_IN_PROCESS_UP_TO", 0)
    if size == "large":
        monkeypatch.setattr(service, "VECTOR_BESIDE_FROM", 1)
    pending = WatchedFuture()
    pending.set_result(embedder().embed_one(request.query))
    answer = service.recall(uuid.UUID(tenant["id"]), request, pending)
    assert events == {
        "small": ["subject's rows", "await vector, 0 connections out"],
        "larger": ["subject's rows", "size", "keyword", "await keyword",
                   "await vector, 0 connections out", "vector"],
        # The keyword list's transaction is still open when the other thread awaits the
        # vector: it is reading the keyword list, not waiting for the model.
        "large": ["subject's rows", "size", "keyword", "await vector, 1 connections out",
                  "vector", "await keyword"],
    }[size]
    assert [str(result.memory.id) for result in answer.results][:1] == [locker["id"]]


def test_a_memory_forgotten_while_the_query_embeds_is_not_returned(
    client: Any, tenant: dict[str, Any]
) -> None:
    """The subject was read whole before the forget; the result load after it still drops
    the memory."""
    from concurrent.futures import Future

    from app.embeddings.runtime import embedder
    from app.forgetting.forget import forget_one
    from app.recall import service
    from app.recall.schemas import RecallRequest

    gone = _remember(client, tenant["app"], "My locker code at the ZX-400 gym is 4471.")
    kept = _remember(client, tenant["app"], "I renewed the ZX-400 gym membership in May.")
    tenant_id = uuid.UUID(tenant["id"])
    request = RecallRequest(subject="user:1", query="ZX-400 gym locker code")

    class ForgettingFuture(Future[list[float]]):
        def result(self, timeout: float | None = None) -> list[float]:
            with uow.unit_of_work(tenant_id) as session:
                row = session.get(Memory, uuid.UUID(gone["id"]))
                assert row is not None
                forget_one(session, row, reason="test", actor="system:test")
            return super().result(timeout)

    pending = ForgettingFuture()
    pending.set_result(embedder().embed_one(request.query))
    ids = [str(result.memory.id) for result in service.recall(tenant_id, request, pending).results]
    assert gone["id"] not in ids and kept["id"] in ids



# Each subject is one draw, with new IDs: two memories that hold the query's words alike score
# the same in the keyword list and share its rank, so they tie whatever their IDs.
TIE_DRAWS = 4


def test_at_equal_scores_the_active_memory_ranks_above_the_suspect_one_it_contradicted(
    client: Any, tenant: dict[str, Any]
) -> None:
    for draw in range(TIE_DRAWS):
        subject = f"user:tie-{draw}"
        old = _remember(client, tenant["app"], "My phone number is 555-1234.", subject=subject)
        new = _remember(client, tenant["app"], "My phone number is 555-0000.", subject=subject)
        assert new["effects"]["suspected"] == [old["id"]]
        body = _recall(client, tenant["app"], "phone", subject=subject, mode="keyword")
        [first, second] = body["results"]
        assert first["score"] == second["score"]
        assert [r["memory"]["id"] for r in body["results"]] == [new["id"], old["id"]]
        assert second["flags"] == ["suspect", "contradicted"]
        # With room for one, the tie is still settled by state, not by where a batch ends.
        top = _recall(client, tenant["app"], "phone", subject=subject, limit=1, mode="keyword")
        assert [r["memory"]["id"] for r in top["results"]] == [new["id"]]
