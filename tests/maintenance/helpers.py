"""Running a maintenance job the way a compliance user does: POST, a real worker, poll."""

from __future__ import annotations

import time
from typing import Any

from app.core.runtime import get_runtime
from tests.core.test_celery_worker import worker


def run_through_worker(client: Any, tenant: dict[str, Any], job: str) -> dict[str, Any]:
    """POST /v1/maintenance/{job}, let a real Celery worker run it; the finished operation."""
    with worker(get_runtime().broker_url, "celery") as process:
        accepted = client.post(f"/v1/maintenance/{job}", headers=tenant["compliance"])
        assert accepted.status_code == 202, accepted.text
        operation_id = accepted.json()["operation_id"]
        deadline = time.monotonic() + 90
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = client.get(f"/v1/operations/{operation_id}", headers=tenant["app"]).json()
            if body["status"] == "succeeded":
                break
            assert process.poll() is None, "worker died"
            time.sleep(0.3)
    assert body["status"] == "succeeded", body
    return body
