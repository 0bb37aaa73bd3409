"""A live Lethe API process on the test database, for MCP servers to call over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.mcp.processes import REPO, free_port, stop, wait_until


@pytest.fixture(scope="module")
def lethe_url(database: dict[str, Any]) -> Iterator[str]:
    """`lethe api` on a free port, against this run's database (migrated by `database`)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "api", "--port", str(port)], cwd=REPO,
        env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: httpx.get(f"{url}/readyz").status_code == 200, process, "lethe api")
        yield url
    finally:
        stop(process)


@pytest.fixture
def app_key(lethe_url: str) -> str:
    created = httpx.post(f"{lethe_url}/v1/tenants", json={"name": "MCP"},
                         headers={"Authorization": f"Bearer {os.environ['LETHE_ADMIN_TOKEN']}"})
    assert created.status_code == 201, created.text
    key: str = created.json()["api_keys"]["app"]
    return key
