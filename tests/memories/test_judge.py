"""The optional judge model, against a real local HTTP server speaking chat completions.

The server answers by the model name it is sent (one server, every behaviour): a fixed
relation, a slow answer, an HTTP error or babble. It records, per request, how many database
connections the API process had checked out: the judge must be asked with none held.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, HTTPException, Request

from app.core import db, uow
from app.core.config import get_settings
from app.embeddings.runtime import embedder
from app.memories import service as memories
from app.memories.schemas import MemoryPatch
from tests.memories.helpers import created

# The rule is unsure about this pair (similar, same frame, no value or change word), so it
# goes to the judge; the phone-number pair is one the rule decides alone.
AISLE, WINDOW = "Prefers aisle seats.", "Prefers window seats."
PHONE, NEW_PHONE = "My phone number is 555-1234.", "My phone number is 555-9876."


@dataclass
class JudgeServer:
    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    checked_out: list[int] = field(default_factory=list)
    # Run while a request is being answered, as another client acting meanwhile would.
    meanwhile: Callable[[], None] | None = None


def _app(state: JudgeServer) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict[str, Any]:
        body = await request.json()
        state.requests.append({**body, "authorization": request.headers.get("authorization")})
        state.checked_out.append(db.app_engine().pool.checkedout())  # type: ignore[attr-defined]
        if state.meanwhile is not None:
            state.meanwhile()
        model = body["model"]
        if model == "fail":
            raise HTTPException(status_code=500, detail="boom")
        if model == "slow":
            await asyncio.sleep(2.0)  # the server keeps answering others meanwhile
        answer = {"babble": "It is hard to say.", "slow": "contradiction"}.get(model, model)
        return {"object": "chat.completion", "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": f" {answer.title()}."}}]}

    return app


@pytest.fixture(scope="module")
def judge_server() -> Iterator[JudgeServer]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    state = JudgeServer(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
    server = uvicorn.Server(uvicorn.Config(_app(state), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test judge server did not start")
        time.sleep(0.02)
    yield state
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def use_judge(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``use_judge(model)`` points the settings at the test server with that model."""

    def configure(model: str) -> JudgeServer:
        monkeypatch.setenv("LETHE_JUDGE_URL", judge_server.base_url)
        monkeypatch.setenv("LETHE_JUDGE_MODEL", model)
        monkeypatch.setenv("LETHE_JUDGE_API_KEY", "judge-key")
        monkeypatch.setenv("LETHE_JUDGE_TIMEOUT_SECONDS", "0.5")
        get_settings.cache_clear()
        judge_server.requests.clear()
        judge_server.checked_out.clear()
        judge_server.meanwhile = None
        return judge_server

    yield configure
    judge_server.meanwhile = None
    monkeypatch.delenv("LETHE_JUDGE_URL", raising=False)
    get_settings.cache_clear()


def _state(client: Any, tenant: dict[str, Any], memory_id: str) -> tuple[str, list[str]]:
    body = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    return body["state"], body["flags"]


def test_the_judge_decides_a_borderline_pair_with_no_connection_held(
    client: Any, tenant: dict[str, Any], use_judge: Any, owner_conn: Any
) -> None:
    server = use_judge("contradiction")
    old = created(client, tenant["app"], text=AISLE)
    new = created(client, tenant["app"], text=WINDOW)
    assert new["effects"]["suspected"] == [old["id"]]
    assert _state(client, tenant, old["id"]) == ("suspect", ["contradicted"])
    [request] = server.requests
    assert server.checked_out == [0]
    assert request["authorization"] == "Bearer judge-key" and request["temperature"] == 0
    assert AISLE in request["messages"][-1]["content"]
    assert WINDOW in request["messages"][-1]["content"]
    reason = owner_conn.execute("SELECT reason FROM audit_event WHERE target_id = %s "
                                "AND action = 'memory.transition'", (old["id"],)).fetchone()[0]
    assert reason == f"contradicted by {new['id']} (judge)"


def test_the_judge_is_not_asked_what_the_rule_is_sure_of(
    client: Any, tenant: dict[str, Any], use_judge: Any
) -> None:
    server = use_judge("unrelated")
    old = created(client, tenant["app"], text=PHONE)
    new = created(client, tenant["app"], text=NEW_PHONE)
    assert new["effects"]["suspected"] == [old["id"]]  # the judge could not overrule it
    assert server.requests == []


def test_a_judge_answering_unrelated_flags_nothing(
    client: Any, tenant: dict[str, Any], use_judge: Any
) -> None:
    server = use_judge("unrelated")
    old = created(client, tenant["app"], text=AISLE)
    assert created(client, tenant["app"], text=WINDOW)["effects"]["suspected"] == []
    assert len(server.requests) == 1
    assert _state(client, tenant, old["id"]) == ("active", [])


@pytest.mark.parametrize("model", ["fail", "slow", "babble"])
def test_a_failing_judge_leaves_the_rules_verdict(
    client: Any, tenant: dict[str, Any], use_judge: Any, model: str
) -> None:
    server = use_judge(model)
    old = created(client, tenant["app"], text=AISLE)
    started = time.monotonic()
    new = created(client, tenant["app"], text=WINDOW)
    assert time.monotonic() - started < 5
    assert new["effects"]["suspected"] == []  # the rule alone: unsure, so not flagged
    assert len(server.requests) == 1
    assert _state(client, tenant, old["id"]) == ("active", [])


def test_a_judge_verdict_on_a_text_changed_since_is_not_used(
    client: Any, tenant: dict[str, Any], use_judge: Any
) -> None:
    """The judge read one version; the memory is edited while the judge thinks, so the
    verdict is about a text it no longer holds and the write does not use it."""
    server = use_judge("contradiction")
    old = created(client, tenant["app"], text=AISLE)
    tenant_id = uuid.UUID(tenant["id"])

    def edit() -> None:
        patch = MemoryPatch(text="Prefers aisle seats, always.")
        with uow.unit_of_work(tenant_id) as session:
            memories.update(session, tenant_id=tenant_id, memory_id=uuid.UUID(old["id"]),
                            if_match='"1"', patch=patch,
                            embedding=embedder().embed_one(patch.text or ""),
                            actor="system:test")

    server.meanwhile = edit
    new = created(client, tenant["app"], text=WINDOW)
    assert len(server.requests) == 1
    assert new["effects"]["suspected"] == []
    read = client.get(f"/v1/memories/{old['id']}", headers=tenant["app"]).json()
    assert (read["state"], read["revision"], read["version"]["seq"]) == ("active", 2, 2)
