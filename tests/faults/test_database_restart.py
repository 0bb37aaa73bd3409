"""The database restarts under a real API process while writes keep arriving.

What must hold: every answer is a 201 whose memory is then readable, or a 503 problem+json
with `Retry-After` (never a 500), and the console answers a 503 page; a 503'd request sent
again with its Idempotency-Key lands exactly once; no memory is half-written (each has its
one version, its current pointer and its idempotency record); and the API serves again once
the database is back, without being restarted itself.
"""

from __future__ import annotations

import re
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from app.core import embedded
from tests.conftest import _libpq
from tests.faults.helpers import Api, api, assert_unavailable, lethe_env, spawn, wait_until

pytestmark = pytest.mark.slow
WRITERS = 3
# Bounds of the load: each writer stops after this many requests or seconds.
MAX_REQUESTS, MAX_SECONDS = 1000, 120.0
RETRY_PAUSE = 0.1
DOWN_SECONDS = 3.0


@dataclass
class Sent:
    key: str
    body: dict[str, Any]
    status: int
    response: httpx.Response


@dataclass
class Load:
    """Writers that POST memories, each with its own Idempotency-Key, until told to stop."""

    api: Api
    headers: dict[str, str]
    sent: list[Sent] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def write(self, writer: int) -> None:
        started = time.monotonic()
        with self.api.client() as client:
            for n in range(MAX_REQUESTS):
                if self.stopping.is_set() or time.monotonic() - started > MAX_SECONDS:
                    return
                key = f"w{writer}-{n}-{uuid.uuid4().hex[:6]}"
                body = {"subject": f"user:{writer}", "text": f"Fact {n} of writer {writer}."}
                try:
                    response = client.post("/v1/memories", json=body,
                                           headers={**self.headers, "Idempotency-Key": key})
                except httpx.TransportError as exc:  # the API itself must never drop us
                    raise AssertionError(f"the API dropped a request: {exc!r}") from exc
                with self.lock:
                    self.sent.append(Sent(key, body, response.status_code, response))
                if response.status_code == 503:
                    time.sleep(RETRY_PAUSE)  # a client backing off, if less than asked

    def count(self, status: int) -> int:
        with self.lock:
            return sum(1 for sent in self.sent if sent.status == status)


def _console_login_form(served: Api) -> tuple[httpx.Client, str]:
    """A browser's view of the sign-in page: its cookies and the form's CSRF token."""
    console = served.client()
    page = console.get("/console/login")
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert page.status_code == 200 and found, page.text
    return console, found.group(1)


def _assert_console_unavailable(served: Api, console: httpx.Client, token: str) -> None:
    """A sign-in while the database is down: a page for people, 503 with Retry-After."""
    try:
        answer = console.post("/console/login", headers={"Origin": served.base},
                              data={"email": "officer@example.com", "password": "pw",
                                    "csrf_token": token})
    finally:
        console.close()
    assert answer.status_code == 503, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert int(answer.headers["retry-after"]) > 0
    assert "nothing was changed" in answer.text


@pytest.fixture
def own_database(tmp_path: Path) -> Iterator[tuple[embedded.EmbeddedServer, dict[str, str]]]:
    """A PostgreSQL of this test's own (stopped and started by it), migrated to head."""
    server = embedded.start(tmp_path / "db")
    env = lethe_env(DATABASE_URL=server.url(), LETHE_DATA_DIR=str(tmp_path / "data"))
    env.pop("LETHE_APP_DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    try:
        migrate = spawn([sys.executable, "-m", "app.cli", "migrate"], env, tmp_path / "migrate.log")
        assert migrate.wait(120) == 0, (tmp_path / "migrate.log").read_text()
        yield server, env
    finally:
        server.stop()


def test_writes_across_a_database_restart_are_applied_whole_or_answered_503(
    own_database: tuple[embedded.EmbeddedServer, dict[str, str]], tmp_path: Path
) -> None:
    server, env = own_database
    with api(env, tmp_path) as served:
        tenant = served.tenant()
        load = Load(served, tenant["app"])
        writers = [threading.Thread(target=load.write, args=(n,)) for n in range(WRITERS)]
        for thread in writers:
            thread.start()
        try:
            wait_until(lambda: load.count(201) >= 10, timeout=60, what="no writes succeeded",
                       log=served.log)
            console, token = _console_login_form(served)
            server.stop()  # fast shutdown: the backends of running requests are cut off
            wait_until(lambda: load.count(503) >= 3, timeout=30, what="no 503 while down",
                       log=served.log)
            _assert_console_unavailable(served, console, token)
            time.sleep(DOWN_SECONDS)
            embedded.start(tmp_path / "db")
            before = load.count(201)
            # The same API process, its pool of dead connections replaced as they are met.
            wait_until(lambda: load.count(201) >= before + 10, timeout=60,
                       what="the API did not serve again after the database came back",
                       log=served.log)
        finally:
            load.stopping.set()
            for thread in writers:
                thread.join(120)
        statuses = {sent.status for sent in load.sent}
        assert statuses <= {201, 503}, [(s.status, s.response.text) for s in load.sent
                                        if s.status not in (201, 503)][:5]
        unavailable = [sent for sent in load.sent if sent.status == 503]
        assert unavailable, "the restart was never seen by a request"
        for sent in unavailable:
            assert_unavailable(sent.response)

        written: dict[str, str] = {}
        with served.client() as client:
            for sent in load.sent:
                if sent.status == 201:
                    written[sent.key] = sent.response.json()["id"]
            # A 503'd request sent again with its key: created now, or replayed when its
            # commit had gone through before the connection was lost. Once either way.
            for sent in unavailable:
                again = client.post("/v1/memories", json=sent.body,
                                    headers={**tenant["app"], "Idempotency-Key": sent.key})
                assert again.status_code == 201, again.text
                written[sent.key] = again.json()["id"]
            for key, memory_id in written.items():
                read = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"])
                assert read.status_code == 200, (key, read.text)
            texts = {sent.key: sent.body["text"] for sent in load.sent}
            for key, memory_id in list(written.items())[:50]:
                read = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"])
                assert read.json()["text"] == texts[key]
        assert served.process.poll() is None, "the API process itself must not restart"
        assert b"Traceback" not in served.log.read_bytes()

    _assert_nothing_half_written(server, set(written.values()))


def _assert_nothing_half_written(server: embedded.EmbeddedServer, written: set[str]) -> None:
    with psycopg.connect(_libpq(server.url())) as conn:
        memories = {str(row[0]) for row in conn.execute("SELECT id FROM memory")}
        assert memories == written, "a memory no answer named, or an answered one missing"
        orphans = conn.execute(
            "SELECT count(*) FROM memory m WHERE NOT EXISTS (SELECT 1 FROM memory_version v"
            " WHERE v.id = m.current_version_id AND v.memory_id = m.id)").fetchone()
        assert orphans == (0,), "a memory without its current version"
        versions = conn.execute(
            "SELECT count(*), count(DISTINCT memory_id) FROM memory_version").fetchone()
        assert versions == (len(written), len(written)), "a version written twice or alone"
        records = conn.execute(
            "SELECT count(*) FROM operation WHERE response_status = 201 AND response_id IN"
            " (SELECT id::text FROM memory)").fetchone()
        assert records == (len(written),), "a memory without its idempotency record"
        unanswered = conn.execute(
            "SELECT count(*) FROM operation WHERE response_status IS NULL").fetchone()
        assert unanswered == (0,), "an idempotency claim left without its answer"
