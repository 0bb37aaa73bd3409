"""The asyncio client against the same live server: the same calls, awaited."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from lethe_client import AsyncLethe, Conflict, MemoryWritten, NotFound, PreconditionFailed
from tests.sdk.conftest import Recorder


async def _scenario(server: str, keys: dict[str, Any], recorder: Recorder) -> None:
    http = httpx.AsyncClient(event_hooks={"response": [recorder.anote]})
    async with AsyncLethe(server, keys["app"], http_client=http) as lethe:
        written = await asyncio.gather(*(
            lethe.memories.create("user:async", f"Async fact {n} holds.") for n in range(3)))
        assert all(isinstance(memory, MemoryWritten) for memory in written)
        listed = [memory async for memory in lethe.memories.list(subject="user:async",
                                                                  page_size=2)]
        assert {m.id for m in listed} == {m.id for m in written}
        first = await lethe.memories.get(written[0].id)
        corrected = await lethe.memories.correct(first, text="Async fact 0 changed.")
        with pytest.raises(PreconditionFailed) as stale:
            await lethe.memories.correct(first, text="Async fact 0 again.")
        assert stale.value.current_revision == corrected.revision
        recalled = await lethe.recall("user:async", "which fact changed?")
        assert recalled.results and recalled.results[0].memory.id == first.id
        with pytest.raises(NotFound):
            await lethe.memories.get(uuid.uuid4())
        forgotten = await lethe.memories.forget(first.id)
        assert forgotten.forgotten is True
        with pytest.raises(NotFound):
            await lethe.memories.get(first.id)


def test_the_async_client_writes_lists_corrects_and_maps_problems(
    server: str, keys: dict[str, Any]
) -> None:
    recorder = Recorder()
    asyncio.run(_scenario(server, keys, recorder))
    writes = [entry for entry in recorder.seen if entry[:2] == ("POST", "/v1/memories")]
    assert len(writes) == 3 and len({entry[3] for entry in writes}) == 3, "a key per call"
    pages = [entry for entry in recorder.seen if entry[:2] == ("GET", "/v1/memories")]
    assert len(pages) == 2


async def _staff_scenario(server: str, keys: dict[str, Any]) -> None:
    async with AsyncLethe(server, keys["compliance"]) as officer:
        ada = await officer.staff.create("ada@example.com", "officer")
        bob = await officer.staff.create("bob@example.com", "viewer")
        assert (await officer.staff.change_role(bob.id, "officer")).role == "officer"
        await officer.staff.remove(ada.id)
        with pytest.raises(Conflict) as last:
            await officer.staff.change_role(bob.id, "viewer")
        assert last.value.slug == "last-officer"
        assert [(m.id, m.role) async for m in officer.staff.list()] == [(bob.id, "officer")]


def test_the_async_client_changes_a_staff_role(server: str, keys: dict[str, Any]) -> None:
    asyncio.run(_staff_scenario(server, keys))


async def _time_scenario(server: str, keys: dict[str, Any]) -> None:
    async with AsyncLethe(server, keys["app"]) as lethe:
        written = await lethe.memories.create(
            "user:async-time", "Holds a season ticket.",
            expires_at=datetime.now(UTC) + timedelta(days=30))
        assert isinstance(written, MemoryWritten) and written.expires_at is not None
        await asyncio.sleep(0.05)
        before = datetime.now(UTC)
        await asyncio.sleep(0.05)
        await lethe.memories.correct(written, text="Holds a day ticket.")
        then = await lethe.memories.get(written.id, as_of=before)
        assert then.text == "Holds a season ticket." and then.revision == 1
        recalled = await lethe.recall("user:async-time", "ticket", as_of=before)
        assert [r.memory.text for r in recalled.results] == ["Holds a season ticket."]


def test_the_async_client_takes_expiry_and_as_of(server: str, keys: dict[str, Any]) -> None:
    asyncio.run(_time_scenario(server, keys))
