"""No log line of a running installation names a subject, a source, remembered text or a
query string: not the API's, the console's, the worker's, beat's, nor the embedded
PostgreSQL's own server log, even when PostgreSQL refuses a duplicate key.

One `lethe serve` (API, console, worker, beat, the embedded PostgreSQL it starts in its data
folder) is driven through every route that takes a subject, a source or text in its query
string or body, an erasure runs to completion, and then every stream and log file is read.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import socket
import string
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from tests.conftest import ADMIN_TOKEN
from tests.live_serve import free_port, stop, wait_until_ready

pytestmark = pytest.mark.slow
# Beat sends each periodic job within the test, so its lines and the worker's are read too;
# not more often: the worker takes about one message a second from the database broker.
BEAT_SECONDS = "20"
QUERY_STRING = re.compile(r"\?\w+=")


def _mark() -> str:
    """Letters only, so no ID or hash in a log line can contain it by chance."""
    return "zq" + "".join(random.choices(string.ascii_lowercase, k=14))


class Served:
    def __init__(self, process: subprocess.Popen[bytes], base: str, data: Path,
                 logs: list[Path]) -> None:
        self.process, self.base, self.data, self.logs = process, base, data, logs
        self.http = httpx.Client(base_url=base, timeout=60)

    def stop(self) -> None:
        """serve stops its parts, then the embedded PostgreSQL: every stream is flushed."""
        self.http.close()
        if self.process.poll() is None:
            stop(self.process)

    def tenant(self) -> dict[str, Any]:
        created = self.http.post("/v1/tenants", json={"name": "Logs"},
                                 headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert created.status_code == 201, created.text
        keys = created.json()["api_keys"]
        return {"app": {"Authorization": f"Bearer {keys['app']}"},
                "compliance": {"Authorization": f"Bearer {keys['compliance']}"}}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """`lethe serve` with beat, on an embedded PostgreSQL of its own; stdout and stderr kept
    apart in files, as a process manager would keep them."""
    data = tmp_path / "data"
    data.mkdir()
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "LETHE_APP_DATABASE_URL", "CELERY_BROKER_URL")}
    env.update({"LETHE_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    for job in ("prune", "decay", "consolidate", "retention", "requeue", "erasure_sweep"):
        env[f"LETHE_{job.upper()}_INTERVAL_SECONDS"] = BEAT_SECONDS
    port = free_port()
    out, err = tmp_path / "serve.stdout", tmp_path / "serve.stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port),
             "--worker-concurrency", "1"], env=env, stdout=stdout, stderr=stderr)
    base = f"http://127.0.0.1:{port}"
    served = Served(process, base, data, [out, err, data / "pgdata" / "log"])
    try:
        wait_until_ready(base, process, err)
        yield served
    finally:
        served.stop()


def _until(check: Callable[[], Any], what: str | Callable[[], str], timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = check()
        if answer:
            return answer
        time.sleep(0.3)
    raise AssertionError(what() if callable(what) else what)


def _drive_api(served: Served, tenant: dict[str, Any], mark: str) -> tuple[str, str]:
    """Every API route that takes a subject, source or text; the IDs of the ingestion and of
    the erasure filed last."""
    http, app, compliance = served.http, tenant["app"], tenant["compliance"]
    subject, source, said = f"user:{mark}", f"chat:{mark}", f"{mark} keeps bees in Lisbon."

    def ok(response: httpx.Response, *statuses: int) -> dict[str, Any]:
        assert response.status_code in (statuses or (200, 201, 202)), response.text
        return response.json() if response.content else {}

    made = ok(http.post("/v1/memories", headers=app, json={
        "subject": subject, "text": said, "source": source, "key": f"{mark}_key",
        "depends_on": {f"{mark}_dep": mark}, "metadata": {"note": mark},
        "session": f"run-{mark}", "volatility": "working"}))
    ok(http.post("/v1/memories", headers=app, json={
        "subject": subject, "text": f"{mark} collects sneakers.", "source": source}))
    ok(http.get("/v1/memories", headers=app, params={"subject": subject, "source": source,
                                                     "key": f"{mark}_key"}))
    ok(http.patch(f"/v1/memories/{made['id']}", headers={**app, "If-Match": '"1"'},
                  json={"text": f"{mark} keeps bees in Porto."}), 200, 412, 428)
    ok(http.post("/v1/recall", headers=app, json={"subject": subject, "query": said}))
    ok(http.post("/v1/memories/batch", headers={**app, "Idempotency-Key": f"b-{mark}"},
                 json={"memories": [{"subject": subject, "text": f"{mark} batch {n}.",
                                     "source": source} for n in range(2)]}))
    ingested = ok(http.post("/v1/ingest", headers={**app, "Idempotency-Key": f"i-{mark}"},
                            json={"subject": subject, "source": f"{source}-ingest",
                                  "memories": [{"text": f"{mark} ingested."}],
                                  "messages": [{"role": "user", "content":
                                                f"Please forget that I like {mark}."}]}))
    ok(http.put(f"/v1/dependencies/{mark}_dep", headers=app, json={"value": f"{mark}-2"}))
    ok(http.post("/v1/forget", headers=app, json={"subject": subject,
                                                  "about": f"that I collect {mark}"}))
    ok(http.post(f"/v1/sessions/run-{mark}/close", headers=app))
    ok(http.post("/v1/sources/exclusions", headers=compliance,
                 json={"source": f"{source}-excluded", "reason": f"asked by {mark}"}))
    ok(http.post("/v1/memories", headers=app, json={
        "subject": subject, "text": said, "source": f"{source}-excluded"}), 409)
    ok(http.post("/v1/memories", headers=app, json={
        "subject": subject, "text": said, "volatility": mark}), 422)
    ok(http.post("/v1/access-requests", headers=app, json={"subject": subject}))
    # mem0's shapes: the user in the body, the query string and the search.
    ok(http.post("/compat/mem0/memories", headers=app, json={
        "user_id": mark, "messages": [{"role": "user", "content": said}]}))
    ok(http.get("/compat/mem0/memories", headers=app, params={"user_id": mark}))
    ok(http.post("/compat/mem0/search", headers=app, json={"user_id": mark, "query": said}))
    ok(http.delete("/compat/mem0/memories", headers=app, params={"user_id": mark}))
    ok(http.get("/v1/nothing-here", headers=app, params={"subject": subject}), 404)
    filed = ok(http.post("/v1/erasure-requests", headers=app,
                         json={"subject": subject, "reason": f"asked by {mark}",
                               "requested_by": f"{mark}@example.com"}))
    ok(http.get("/v1/erasure-requests", headers=compliance, params={"subject": subject}))
    return str(ingested["operation_id"]), str(filed["id"])


def _drive_console(served: Served, tenant: dict[str, Any], mark: str) -> None:
    """An officer signs in and searches one subject's memories by text."""
    password = "correct horse battery staple"
    email = f"officer@{mark}.example"
    added = served.http.post("/v1/staff", headers=tenant["compliance"],
                             json={"email": email, "role": "officer", "password": password})
    assert added.status_code == 201, added.text
    with httpx.Client(base_url=served.base, timeout=60) as browser:
        page = browser.get("/console/login")
        token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        signed_in = browser.post("/console/login", headers={"Origin": served.base},
                                 data={"email": email, "password": password,
                                       "csrf_token": token})
        assert signed_in.status_code in (200, 303), signed_in.text
        found = browser.get("/console/memories",
                            params={"subject": f"user:{mark}", "q": f"{mark} bees"})
        assert found.status_code == 200, found.text


def _unparsable_request(served: Served, mark: str) -> None:
    """A request line uvicorn's parser refuses, holding the subject in its query string."""
    port = int(served.base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET /v1/memories?subject=user:{mark} HTTP/1.1\r\nHost: x\r\n"
                     f"Bad\x01Header: {mark}\r\n\r\n".encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 400")


def _duplicate_keys(served: Served, mark: str) -> list[str]:
    """PostgreSQL refuses a duplicate key naming the subject, once with the value written
    into the statement and once through the app's engine with it bound: the server logs
    both ERRORs. The second one's exception, as Lethe's formatter writes it in the API's
    line and in Celery's lines of a task that raised it or returned the subject: returned."""
    from celery.app import trace

    from app.core import db, embedded, logs

    server = embedded.start(served.data)  # attaches to the running server
    with psycopg.connect(server.conninfo().replace("dbname=postgres", "dbname=lethe"),
                         autocommit=True) as conn:
        conn.execute(f"CREATE TABLE zq_unique (value text PRIMARY KEY);"
                     f" INSERT INTO zq_unique VALUES ('user:{mark}')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(f"INSERT INTO zq_unique VALUES ('user:{mark}')")
    engine = db.make_engine(server.url(), pool_size=1)
    try:
        with pytest.raises(IntegrityError) as refused, engine.begin() as connection:
            connection.execute(text("INSERT INTO zq_unique VALUES (:value)"),
                               {"value": f"user:{mark}"})
    finally:
        engine.dispose()
    error = refused.value
    failed = (IntegrityError, error, error.__traceback__)
    task = {"id": "1", "name": "erasure.run", "hostname": "celery@here", "internal": False,
            "description": "raised unexpected", "exc": repr(error), "traceback": "",
            "args": f"('{mark}',)", "kwargs": "{}", "runtime": 0.1,
            "return_value": repr(f"user:{mark}")}
    records = [
        logging.LogRecord("app.core.errors", logging.ERROR, __file__, 0, "unhandled: %s",
                          (error,), failed),
        logging.LogRecord("celery.app.trace", logging.ERROR, __file__, 0,
                          trace.LOG_FAILURE.strip(), (task,), failed),
        logging.LogRecord("celery.app.trace", logging.INFO, __file__, 0, trace.LOG_SUCCESS,
                          (task,), None),
    ]
    return [logs.JsonFormatter().format(record) for record in records]


def test_no_log_line_names_a_subject_source_text_or_query_string(served: Served) -> None:
    mark = _mark()
    tenant = served.tenant()
    ingestion_id, erasure_id = _drive_api(served, tenant, mark)
    _drive_console(served, tenant, mark)
    _unparsable_request(served, mark)
    formatted = _duplicate_keys(served, mark)
    _until(lambda: served.http.get(f"/v1/operations/{ingestion_id}", headers=tenant["app"])
           .json()["status"] == "succeeded", "the ingestion was not applied")
    erasure = f"/v1/erasure-requests/{erasure_id}"
    _until(lambda: served.http.get(erasure, headers=tenant["compliance"]).json()["status"]
           == "completed", lambda: served.http.get(erasure, headers=tenant["compliance"]).text)

    for line in formatted:
        assert mark not in line and "Key (" not in line, line
    assert "UniqueViolation (sqlstate 23505, constraint zq_unique_pkey" in json.loads(
        formatted[0])["error"]
    assert "raised unexpected: IntegrityError" in formatted[1]
    # Beat's first sends come one interval after it starts (a minute for webhook retries):
    # wait for one, so its lines are among those read.
    stderr = next(path for path in served.logs if path.name == "serve.stderr")
    _until(lambda: "Scheduler: Sending due task" in stderr.read_text(errors="replace"),
           "beat sent no task", timeout=150)
    served.stop()
    logged = {path.name: path.read_text(errors="replace") for path in served.logs}
    assert "duplicate key value violates unique constraint" in logged["log"], logged["log"]
    assert '"route": "/compat/mem0/memories"' in logged["serve.stderr"]
    for name, content in logged.items():
        lines = [line for line in content.splitlines()
                 if mark in line or QUERY_STRING.search(line) or "&q=" in line
                 or "DETAIL:" in line or "STATEMENT:" in line]
        assert not lines, f"{name}:\n" + "\n".join(lines[:20])
    # Each part logged: the API its requests, the worker its tasks, beat its schedule.
    assert "Task erasure.run[" in logged["serve.stderr"]
    assert "Scheduler: Sending due task" in logged["serve.stderr"]
