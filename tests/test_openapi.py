"""The committed OpenAPI document is the app's own; regenerate with `lethe openapi`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COMMITTED = Path(__file__).resolve().parents[1] / "openapi" / "openapi.json"


def test_committed_openapi_matches_the_app(app: Any) -> None:
    committed = json.loads(COMMITTED.read_text())
    assert committed == json.loads(json.dumps(app.openapi())), (
        "openapi/openapi.json is stale: run `lethe openapi` and commit the result"
    )


def test_contract_paths_are_described(app: Any) -> None:
    paths = app.openapi()["paths"]
    for path in ("/v1/tenants", "/v1/settings", "/v1/operations/{operation_id}", "/healthz",
                 "/readyz", "/v1/erasure-requests", "/v1/erasure-requests/{request_id}",
                 "/v1/erasure-requests/{request_id}/receipt",
                 "/v1/erasure-requests/{request_id}/approve",
                 "/v1/erasure-requests/{request_id}/cancel"):
        assert path in paths
    patch = paths["/v1/settings"]["patch"]
    assert any(p["name"] == "Idempotency-Key" for p in patch["parameters"])
