"""An access request through a real Celery worker on the embedded broker."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.core.runtime import get_runtime
from tests.access.helpers import assert_holds_ana_only, download, request_access, seed
from tests.core.test_celery_worker import worker

DEADLINE = 90.0


@pytest.mark.slow
def test_an_access_request_is_exported_by_a_real_worker(
    client: Any, tenant: dict[str, Any]
) -> None:
    seeded = seed(client, tenant["app"])
    with worker(get_runtime().broker_url, "celery") as process:
        request_id = request_access(client, tenant["app"])
        deadline = time.monotonic() + DEADLINE
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = client.get(f"/v1/operations/{request_id}", headers=tenant["app"]).json()
            if body["status"] in ("succeeded", "failed"):
                break
            assert process.poll() is None, "the worker died"
            time.sleep(0.3)
    assert body["status"] == "succeeded", body
    raw, document = download(client, tenant["app"], request_id)
    assert_holds_ana_only(raw, document, seeded)
