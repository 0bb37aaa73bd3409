"""`lethe mcp` driven by the `mcp` package's own client, over stdio and streamable HTTP,
against a live Lethe API: the tools remember, recall, correct and forget for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.processes import REPO, free_port, stop, wait_until

SUBJECT = "user:mcp"
OTHER_SUBJECT = "user:other"
TOOLS = {"remember", "recall", "correct", "forget", "forget_about", "close_session"}


def _command(*extra: str) -> list[str]:
    return ["-m", "app.cli", "mcp", "--subject", SUBJECT, *extra]


def _environment(lethe_url: str, app_key: str) -> dict[str, str]:
    return {"LETHE_URL": lethe_url, "LETHE_API_KEY": app_key}


@asynccontextmanager
async def _stdio(lethe_url: str, app_key: str) -> AsyncIterator[ClientSession]:
    parameters = StdioServerParameters(command=sys.executable, args=_command(), cwd=REPO,
                                       env=_environment(lethe_url, app_key))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@pytest.fixture
def http_server(lethe_url: str, app_key: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *_command("--transport", "http", "--port", str(port))], cwd=REPO,
        env={**os.environ, **_environment(lethe_url, app_key)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Any answer at all means it listens (a GET without a session is refused).
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/mcp").status_code > 0,
                   process, "lethe mcp --transport http")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@asynccontextmanager
async def _http(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _call(client: ClientSession, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content or json.loads(result.content[0].text)  # type: ignore[union-attr]


async def _lifecycle(session: ClientSession) -> None:
    """List tools; remember → recall finds it → correct → forget → recall no longer does."""
    listed = await session.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS
    assert all(tool.description for tool in listed.tools)
    written = await _call(session, "remember", text="I live in Lisbon with my two cats.",
                          volatility="structural")
    memory_id = written["memory"]["id"]
    assert written["stored"] is True and written["memory"]["subject"] == SUBJECT
    found = await _call(session, "recall", query="Where does the user live?")
    assert [r["id"] for r in found["results"]] == [memory_id]
    corrected = await _call(session, "correct", memory_id=memory_id,
                            text="I live in Porto with my two cats.")
    assert corrected["memory"]["text"] == "I live in Porto with my two cats."
    found = await _call(session, "recall", query="Where does the user live?")
    assert [r["text"] for r in found["results"]] == ["I live in Porto with my two cats."]
    assert (await _call(session, "forget", memory_id=memory_id)) == {"forgotten": memory_id}
    found = await _call(session, "recall", query="Where does the user live?")
    assert found["results"] == []
    # Scoped to one subject: another is refused with a reason the agent can act on.
    refused = await session.call_tool("recall", {"query": "cats", "subject": "user:other"})
    assert refused.is_error and "scoped" in refused.content[0].text  # type: ignore[union-attr]


@pytest.mark.slow
def test_stdio_transport_remembers_recalls_corrects_and_forgets(
    lethe_url: str, app_key: str
) -> None:
    async def scenario() -> None:
        async with _stdio(lethe_url, app_key) as session:
            await _lifecycle(session)

    anyio.run(scenario)


@pytest.mark.slow
def test_streamable_http_transport_remembers_recalls_corrects_and_forgets(
    http_server: str,
) -> None:
    async def scenario() -> None:
        async with _http(http_server) as session:
            await _lifecycle(session)

    anyio.run(scenario)


def _remember_over_http(lethe_url: str, app_key: str, subject: str, text: str,
                        **fields: str) -> str:
    created = httpx.post(f"{lethe_url}/v1/memories",
                         json={"subject": subject, "text": text, **fields},
                         headers={"Authorization": f"Bearer {app_key}"})
    assert created.status_code == 201, created.text
    memory_id: str = created.json()["id"]
    return memory_id


def _as_stored(lethe_url: str, app_key: str, memory_id: str) -> dict[str, Any]:
    read = httpx.get(f"{lethe_url}/v1/memories/{memory_id}",
                     headers={"Authorization": f"Bearer {app_key}"})
    assert read.status_code == 200, read.text
    return {key: read.json()[key] for key in ("subject", "text", "state", "revision")}


async def _refuses_other_subjects_memories(session: ClientSession, lethe_url: str,
                                           app_key: str) -> None:
    """A memory about another subject of the same tenant is neither corrected nor forgotten
    by a server scoped to `SUBJECT`; one about `SUBJECT` still is."""
    theirs = _remember_over_http(lethe_url, app_key, OTHER_SUBJECT, "I live in Lisbon.")
    mine = _remember_over_http(lethe_url, app_key, SUBJECT, "I live in Oslo.")
    before = _as_stored(lethe_url, app_key, theirs)
    for tool, arguments in (("correct", {"memory_id": theirs, "text": "I live in Porto."}),
                            ("forget", {"memory_id": theirs})):
        refused = await session.call_tool(tool, arguments)
        assert refused.is_error, (tool, refused.content)
        assert f"not about subject '{SUBJECT}'" in refused.content[0].text  # type: ignore[union-attr]
    assert _as_stored(lethe_url, app_key, theirs) == before
    corrected = await _call(session, "correct", memory_id=mine, text="I live in Bergen.")
    assert corrected["memory"]["text"] == "I live in Bergen."
    assert (await _call(session, "forget", memory_id=mine)) == {"forgotten": mine}

    # Forgotten, a memory reads as absent to every key: the scoped server answers a second
    # forget of its subject's memory as it answers another subject's forgotten memory or no
    # memory at all.
    forgotten_theirs = _remember_over_http(lethe_url, app_key, OTHER_SUBJECT, "I skate.")
    assert httpx.delete(f"{lethe_url}/v1/memories/{forgotten_theirs}",
                        headers={"Authorization": f"Bearer {app_key}"}).status_code == 204
    answers = set()
    for memory_id in (mine, forgotten_theirs, str(uuid.uuid4())):
        again = await session.call_tool("forget", {"memory_id": memory_id})
        assert again.is_error, again.content
        text = again.content[0].text  # type: ignore[union-attr]
        assert "forgotten already" in text and "Nothing was changed" in text
        answers.add(text.replace(memory_id, "ID"))
    assert len(answers) == 1, answers

    # A run name both subjects' agents used: closing it evicts only the scoped subject's part.
    run = f"shared-run-{uuid.uuid4().hex[:8]}"
    their_scratch = _remember_over_http(lethe_url, app_key, OTHER_SUBJECT, "I am packing.",
                                        volatility="working", session=run)
    my_scratch = _remember_over_http(lethe_url, app_key, SUBJECT, "I am comparing trains.",
                                     volatility="working", session=run)
    before = _as_stored(lethe_url, app_key, their_scratch)
    closed = await _call(session, "close_session", session=run)
    assert closed["evicted"] == [my_scratch] and closed["kept"] == []
    assert _as_stored(lethe_url, app_key, their_scratch) == before


@pytest.mark.slow
def test_stdio_server_scoped_to_a_subject_refuses_another_subjects_memory(
    lethe_url: str, app_key: str
) -> None:
    async def scenario() -> None:
        async with _stdio(lethe_url, app_key) as session:
            await _refuses_other_subjects_memories(session, lethe_url, app_key)

    anyio.run(scenario)


@pytest.mark.slow
def test_streamable_http_server_scoped_to_a_subject_refuses_another_subjects_memory(
    http_server: str, lethe_url: str, app_key: str
) -> None:
    async def scenario() -> None:
        async with _http(http_server) as session:
            await _refuses_other_subjects_memories(session, lethe_url, app_key)

    anyio.run(scenario)


@pytest.mark.slow
def test_forget_about_forgets_by_description(lethe_url: str, app_key: str) -> None:
    async def scenario() -> None:
        async with _stdio(lethe_url, app_key) as session:
            kept = await _call(session, "remember", text="I work as a nurse in Leeds.")
            await _call(session, "remember", text="I collect rare Jordan sneakers.")
            answer = await _call(session, "forget_about", description="that I collect sneakers")
            assert len(answer["forgotten"]) == 1
            found = await _call(session, "recall", query="sneakers or work")
            assert [r["id"] for r in found["results"]] == [kept["memory"]["id"]]
            assert found["retractions"] == ["that I collect sneakers"]

    anyio.run(scenario)


@pytest.mark.slow
def test_close_session_forgets_the_runs_working_memories(lethe_url: str, app_key: str) -> None:
    async def scenario() -> None:
        async with _stdio(lethe_url, app_key) as session:
            scratch = await _call(session, "remember", text="I am comparing flights to Rome.",
                                  volatility="working", session="run-42")
            durable = await _call(session, "remember", text="I prefer aisle seats.",
                                  session="run-42")
            assert scratch["memory"]["session"] == "run-42"
            closed = await _call(session, "close_session", session="run-42")
            assert closed["evicted"] == [scratch["memory"]["id"]]
            assert closed["kept"] == [durable["memory"]["id"]]
            found = await _call(session, "recall", query="flights or seats")
            assert [r["id"] for r in found["results"]] == [durable["memory"]["id"]]

    anyio.run(scenario)


@pytest.mark.slow
def test_remember_takes_an_expiry_that_recall_honours_at_the_instant(
    lethe_url: str, app_key: str
) -> None:
    async def scenario() -> None:
        async with _stdio(lethe_url, app_key) as session:
            lasting = await _call(session, "remember", text="I collect vinyl records.")
            until = datetime.now(UTC) + timedelta(seconds=3)
            trip = await _call(session, "remember", text="I am in Tokyo for a record fair.",
                               volatility="situational", expires_at=until.isoformat())
            assert trip["memory"]["expires_at"] is not None
            found = await _call(session, "recall", query="records")
            assert {r["id"] for r in found["results"]} == {lasting["memory"]["id"],
                                                           trip["memory"]["id"]}
            await anyio.sleep(max(0.0, (until - datetime.now(UTC)).total_seconds()) + 0.05)
            found = await _call(session, "recall", query="records")
            assert [r["id"] for r in found["results"]] == [lasting["memory"]["id"]]

    anyio.run(scenario)
