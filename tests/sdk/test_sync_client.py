"""The blocking client against a live `lethe serve`: every answer parsed, every refusal typed."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from app.core import uow
from app.tenant_settings import service as tenant_settings
from app.tenant_settings.schemas import SettingsPatch
from lethe_client import (
    Conflict,
    Forbidden,
    ForgetRequestHandled,
    LegalHold,
    Lethe,
    LetheError,
    MemoryWritten,
    NotFound,
    PreconditionFailed,
    SourceExcluded,
    Unauthorized,
)
from tests.sdk.conftest import Recorder


def _written(value: Any) -> MemoryWritten:
    assert isinstance(value, MemoryWritten), value
    return value


def test_a_stale_correct_is_refused_with_the_current_revision(
    server: str, keys: dict[str, Any]
) -> None:
    with Lethe(server, keys["app"]) as lethe:
        memory = _written(lethe.memories.create("user:1", "I live in Lisbon.", key="home_city"))
        read = lethe.memories.get(memory.id)
        assert read.revision == memory.revision and read.text == "I live in Lisbon."
        corrected = lethe.memories.correct(read, text="I live in Porto.")
        assert corrected.revision == read.revision + 1 and corrected.text == "I live in Porto."
        with pytest.raises(PreconditionFailed) as refused:
            lethe.memories.correct(read, text="I live in Faro.")
        assert refused.value.status == 412
        assert refused.value.type == "https://lethe.dev/problems/revision-mismatch"
        assert refused.value.current_revision == corrected.revision
        assert lethe.memories.get(memory.id).text == "I live in Porto."
        history = lethe.memories.history(memory.id)
        assert [v.text for v in history] == ["I live in Lisbon.", "I live in Porto."]
        reverted = lethe.memories.revert(corrected, history[0].seq)
        assert reverted.text == "I live in Lisbon."
        lineage = lethe.memories.lineage(memory.id)
        assert [v.current for v in lineage.versions] == [True, False]


def test_list_iterates_across_pages(server: str, keys: dict[str, Any]) -> None:
    recorder = Recorder()
    http = httpx.Client(event_hooks=recorder.hooks())
    with Lethe(server, keys["app"], http_client=http) as lethe:
        made = {_written(lethe.memories.create("user:pages", f"Fact number {n} is true.")).id
                for n in range(5)}
        listed = list(lethe.memories.list(subject="user:pages", page_size=2))
    assert {memory.id for memory in listed} == made and len(listed) == 5
    pages = [entry for entry in recorder.seen if entry[:2] == ("GET", "/v1/memories")]
    assert len(pages) == 3


def test_problems_map_to_exceptions_with_their_type(server: str, keys: dict[str, Any]) -> None:
    with Lethe(server, keys["app"]) as lethe, Lethe(server, keys["compliance"]) as officer:
        with pytest.raises(NotFound) as missing:
            lethe.memories.get(uuid.uuid4())
        assert missing.value.status == 404 and missing.value.type.endswith("/not-found")
        assert missing.value.request_id
        with pytest.raises(Forbidden):
            lethe.audit.verify()
        memory = _written(lethe.memories.create("user:2", "I collect stamps.",
                                                source="conversation:9"))
        hold = officer.legal_holds.create(subject="user:2", reason="litigation")
        with pytest.raises(LegalHold) as held:
            lethe.memories.delete(memory.id)
        assert held.value.status == 409 and held.value.slug == "legal-hold"
        assert officer.legal_holds.get(hold.id).held_count == 1
        officer.legal_holds.release(hold.id, reason="case closed")
        assert lethe.memories.forget(memory.id).forgotten is True
        with pytest.raises(SourceExcluded):
            lethe.memories.create("user:2", "I collect coins.", source="conversation:9")
        assert officer.audit.verify().ok is True
        actions = {event.action: event for event in officer.audit.list(page_size=2)}
        assert {"legal_hold.placed", "legal_hold.released"} <= set(actions)
        assert actions["legal_hold.released"].reason == "case closed"
    with Lethe(server, "not-a-key") as stranger, pytest.raises(Unauthorized) as unknown:
        stranger.settings.get()
    assert isinstance(unknown.value, LetheError) and unknown.value.title


def test_a_forget_request_is_handled_not_stored(server: str, keys: dict[str, Any]) -> None:
    with Lethe(server, keys["compliance"]) as officer:
        settings = officer.settings.update(detect_forget_requests=True)
        assert settings.detect_forget_requests is True
    with Lethe(server, keys["app"]) as lethe:
        assert lethe.settings.get().detect_forget_requests is True
        lethe.memories.create("user:3", "I collect sneakers.")
        handled = lethe.memories.create("user:3", "Please forget that I collect sneakers.")
        assert isinstance(handled, ForgetRequestHandled)
        assert handled.effects.retraction is not None
        assert lethe.recall("user:3", "sneakers").results == []


def test_a_429_is_retried_after_retry_after_with_the_same_idempotency_key(
    server: str, keys: dict[str, Any], owner_conn: Any
) -> None:
    tenant_id = keys["id"]
    # Written here, before the server reads this tenant's limits (it caches them a while).
    with uow.unit_of_work(tenant_id) as session:
        tenant_settings.update(session, tenant_id=tenant_id, actor="admin", patch=SettingsPatch(
            limits={"rate_limit": "on", "requests_per_minute": 60}))
    recorder = Recorder()
    with Lethe(server, keys["app"], http_client=httpx.Client(event_hooks=recorder.hooks())
               ) as lethe:
        # Drain the key's bucket: a minute's worth of requests at once.
        for _ in range(60):
            try:
                lethe.settings.get()
            except LetheError:
                break
        started = time.monotonic()
        memory = _written(lethe.memories.create("user:rate", "I drink my coffee black."))
        took = time.monotonic() - started
    writes = [entry for entry in recorder.seen if entry[:2] == ("POST", "/v1/memories")]
    statuses = [entry[2] for entry in writes]
    assert 429 in statuses and statuses[-1] == 201, statuses
    assert len({entry[3] for entry in writes}) == 1 and writes[0][3], writes
    assert took >= 1.0, "Retry-After (at least 1 s) was not waited for"
    count = owner_conn.execute(
        "SELECT count(*) FROM memory WHERE tenant_id = %s", (tenant_id,)).fetchone()[0]
    assert count == 1 and memory.replayed is False


def test_a_retried_call_with_a_given_key_replays(server: str, keys: dict[str, Any]) -> None:
    with Lethe(server, keys["app"]) as lethe:
        first = _written(lethe.memories.create("user:4", "I play the cello.",
                                               idempotency_key="import-line-1"))
        again = _written(lethe.memories.create("user:4", "I play the cello.",
                                               idempotency_key="import-line-1"))
    assert again.id == first.id and again.replayed is True and first.replayed is False


def test_ingest_is_applied_by_the_worker_and_polled(server: str, keys: dict[str, Any]) -> None:
    with Lethe(server, keys["app"]) as lethe:
        accepted = lethe.ingest("user:5", source="conversation:5",
                                memories=[{"text": "I work as a nurse."}])
        operation = lethe.operations.wait(accepted.operation_id, timeout=120)
        assert operation.status == "succeeded", operation
        assert operation.result is not None
        stored = [lethe.memories.get(mid).text for mid in operation.result["memory_ids"]]
        assert stored == ["I work as a nurse."]


def test_staff_roles_change_and_the_last_officer_stays(server: str, keys: dict[str, Any]
                                                       ) -> None:
    with Lethe(server, keys["compliance"]) as officer, Lethe(server, keys["app"]) as app:
        ada = officer.staff.create("ada@example.com", "officer")
        bob = officer.staff.create("bob@example.com", "viewer")
        promoted = officer.staff.change_role(bob.id, "officer")
        assert (promoted.id, promoted.email, promoted.role) == (bob.id, bob.email, "officer")
        assert officer.staff.change_role(ada.id, "viewer").role == "viewer"
        assert [(m.id, m.role) for m in officer.staff.list()] == [
            (ada.id, "viewer"), (bob.id, "officer")]
        for refused in (lambda: officer.staff.change_role(bob.id, "viewer"),
                        lambda: officer.staff.remove(bob.id)):
            with pytest.raises(Conflict) as last:
                refused()
            assert last.value.status == 409 and last.value.slug == "last-officer"
        with pytest.raises(NotFound) as missing:
            officer.staff.change_role(uuid.uuid4(), "officer")
        assert missing.value.slug == "staff-not-found"
        with pytest.raises(Forbidden):
            app.staff.change_role(ada.id, "officer")
        officer.staff.remove(ada.id)
        assert [(m.id, m.role) for m in officer.staff.list()] == [(bob.id, "officer")]


def test_expiry_and_as_of(server: str, keys: dict[str, Any]) -> None:
    from datetime import UTC, datetime, timedelta

    with Lethe(server, keys["app"]) as lethe:
        until = datetime.now(UTC) + timedelta(seconds=3)
        trip = lethe.memories.create("user:sdk-time", "Is in Tokyo for the fair.",
                                     expires_at=until)
        assert isinstance(trip, MemoryWritten) and trip.expires_at == until
        time.sleep(0.05)
        before = datetime.now(UTC)
        time.sleep(0.05)
        corrected = lethe.memories.correct(trip, text="Is in Kyoto for the fair.")
        assert [r.memory.text for r in lethe.recall("user:sdk-time", "fair", as_of=before)
                .results] == ["Is in Tokyo for the fair."]
        assert lethe.memories.get(trip.id, as_of=before).text == "Is in Tokyo for the fair."
        time.sleep(max(0.0, (until - datetime.now(UTC)).total_seconds()) + 0.05)
        assert lethe.recall("user:sdk-time", "fair").results == []
        cleared = lethe.memories.correct(corrected, expires_at=None)
        assert cleared.expires_at is None
        assert [r.memory.id for r in lethe.recall("user:sdk-time", "fair").results] == [
            trip.id]
