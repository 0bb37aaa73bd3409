"""The broker (a Redis of the test's own) stops and starts under a real API process.

The design: a request that starts background work commits its job first (the operation row,
the erasure request) and sends the message after the commit. With the broker down the send
fails, is logged, and the request is still answered 202: what it accepted is durable in
PostgreSQL. Beat's sweeps (`idempotency.requeue_stale_jobs`, `erasure.sweep`) send every job
left pending too long again once the broker is back.

What must hold: while the broker is down, ingest, erasure and maintenance are answered 202
within a bounded time and their rows are stored; reads that need no broker answer as usual;
a message queued before the outage survives it; once the broker is back, every accepted job
runs to completion exactly once in effect; the API process is never restarted.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.runtime import get_runtime
from app.keys import digests
from tests import sealed
from tests.faults.helpers import api, beat, lethe_env, redis_server, wait_until, worker

pytestmark = pytest.mark.slow
# A request whose send fails may wait for the broker client's own retries, not longer.
SEND_BOUND = 15.0
DEADLINE = 120.0


def _accepted(response: httpx.Response) -> str:
    assert response.status_code == 202, response.text
    operation_id: str = response.json().get("operation_id") or response.json()["id"]
    return operation_id


def _timed(call: Any) -> httpx.Response:
    started = time.monotonic()
    response: httpx.Response = call()
    assert time.monotonic() - started < SEND_BOUND, "a request waited on the broker too long"
    return response


def test_jobs_accepted_while_the_broker_is_down_run_once_it_is_back(
    tmp_path: Path, owner_conn: Any
) -> None:
    runtime = get_runtime()
    with redis_server(tmp_path) as redis:
        env = lethe_env(DATABASE_URL=runtime.owner_url, LETHE_APP_DATABASE_URL=runtime.app_url,
                        CELERY_BROKER_URL=redis.url)
        with api(env, tmp_path) as served, served.client() as client:
            tenant = served.tenant()
            app, compliance = tenant["app"], tenant["compliance"]
            kept = client.post("/v1/memories", headers=app,
                               json={"subject": "user:gone", "text": "Sails a dinghy."})
            assert kept.status_code == 201, kept.text
            # Queued before the outage, with no worker yet: its message waits in Redis.
            before = _accepted(client.post(
                "/v1/ingest", headers={**app, "Idempotency-Key": "before"},
                json={"subject": "user:1", "memories": [{"text": "Grows chillies."}]}))

            redis.stop()
            ingest = _accepted(_timed(lambda: client.post(
                "/v1/ingest", headers={**app, "Idempotency-Key": "during"},
                json={"subject": "user:1", "memories": [{"text": "Bakes rye bread."}]})))
            erasure = _accepted(_timed(lambda: client.post(
                "/v1/erasure-requests", headers=app, json={"subject": "user:gone"})))
            decay = _accepted(_timed(lambda: client.post(
                "/v1/maintenance/decay", headers=compliance)))
            # A replay of an accepted ingestion answers from the database alone.
            replay = client.post("/v1/ingest", headers={**app, "Idempotency-Key": "during"},
                                 json={"subject": "user:1",
                                       "memories": [{"text": "Bakes rye bread."}]})
            assert replay.status_code == 202 and replay.json()["operation_id"] == ingest
            read = client.get(f"/v1/memories/{kept.json()['id']}", headers=app)
            assert read.status_code == 200
            stored = owner_conn.execute(
                "SELECT id::text, status FROM operation WHERE id IN (%s, %s, %s)",
                (before, ingest, decay)).fetchall()
            assert sorted(stored) == sorted([(before, "queued"), (ingest, "queued"),
                                             (decay, "queued")])
            assert client.get(f"/v1/erasure-requests/{erasure}",
                              headers=app).json()["status"] == "pending"

            redis.start()  # the same data folder: what was queued before the outage is kept
            sweeps = {"LETHE_REQUEUE_AFTER_SECONDS": "2", "LETHE_REQUEUE_INTERVAL_SECONDS": "2",
                      "LETHE_ERASURE_SWEEP_INTERVAL_SECONDS": "2"}
            with worker({**env, **sweeps}, tmp_path / "worker.log"), \
                    beat({**env, **sweeps}, tmp_path, "beat"):
                for operation_id in (before, ingest, decay):
                    wait_until(lambda op=operation_id: client.get(
                        f"/v1/operations/{op}", headers=compliance).json()["status"]
                        == "succeeded", timeout=DEADLINE, what=f"{operation_id} did not run",
                        log=tmp_path / "worker.log")
                finished = wait_until(lambda: (r := client.get(
                    f"/v1/erasure-requests/{erasure}", headers=app).json())["status"]
                    == "completed" and r, timeout=DEADLINE, what="the erasure did not run",
                    log=tmp_path / "worker.log")
            listed = {m["text"] for m in client.get("/v1/memories?subject=user:1",
                                                    headers=app).json()["data"]}
            assert served.process.poll() is None
        # The sends did fail (and were logged), and the sweep is what sent them again.
        assert served.log.read_text().count("could not send") >= 3
    assert finished["receipt"]["counts"]["memories"] == 1
    # Each ingestion applied once: one memory each, however often its message was sent.
    rows = sealed.texts(owner_conn, "m.tenant_id = %s AND m.subject = %s", (
        tenant["id"], digests.subject_digest(uuid.UUID(tenant["id"]), "user:1")))
    assert sorted(rows) == ["Bakes rye bread.", "Grows chillies."]
    assert listed == {"Bakes rye bread.", "Grows chillies."}
    applied = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE action = 'ingest.applied'"
        " AND target_id IN (%s, %s)", (before, ingest)).fetchone()
    assert applied == (2,)
