"""Every 202 in this API answers `{"operation_id", "kind", "status"}` with `Location`, and a
job is an operation row written through one store (app/idempotency/store.py)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from app.idempotency.keys import request_digest

REPLAYED = "Idempotent-Replayed"
INGEST = {"subject": "user:1", "memories": [{"text": "Keeps bees on the roof."}]}

# One valid request per 202 route: (path to call, headers of the tenant to use, body).
Request = Callable[[dict[str, Any]], tuple[str, dict[str, str], dict[str, Any] | None]]
ACCEPTING: dict[tuple[str, str], Request] = {
    ("POST", "/v1/ingest"): lambda tenant: (
        "/v1/ingest", {**tenant["app"], "Idempotency-Key": uuid.uuid4().hex}, INGEST),
    ("POST", "/v1/maintenance/{job}"): lambda tenant: (
        "/v1/maintenance/invalidate", tenant["compliance"], None),
    ("POST", "/v1/access-requests"): lambda tenant: (
        "/v1/access-requests", tenant["app"], {"subject": "user:1"}),
}


# The contract gives an erasure request's 202 a body of its own (docs/api.md, "Compliance"): the
# request itself, polled at its own `Location`, not an operation.
# mem0's delete-all files one too, answered in a mem0-style shape (docs/compat-mem0.md).
OWN_SHAPE = {("POST", "/v1/erasure-requests"): "ErasureFiled",
             ("DELETE", "/compat/mem0/memories"): "Mem0ErasureRequested"}


def test_every_202_route_is_checked_here(app: Any) -> None:
    declared = {(method.upper(), path) for path, item in app.openapi()["paths"].items()
                for method, operation in item.items() if "202" in operation["responses"]}
    assert declared == set(ACCEPTING) | set(OWN_SHAPE)


@pytest.mark.parametrize("route", sorted(ACCEPTING), ids=lambda r: f"{r[0]} {r[1]}")
def test_a_202_answers_the_operation_shape_with_its_location(
    client: Any, tenant: dict[str, Any], route: tuple[str, str]
) -> None:
    path, headers, body = ACCEPTING[route](tenant)
    response = client.request(route[0], path, headers=headers, json=body)
    assert response.status_code == 202, response.text
    answer = response.json()
    assert set(answer) == {"operation_id", "kind", "status"}
    assert answer["status"] == "queued"
    assert response.headers["Location"] == f"/v1/operations/{answer['operation_id']}"
    polled = client.get(response.headers["Location"], headers=tenant["app"])
    assert polled.status_code == 200
    assert (polled.json()["id"], polled.json()["kind"]) == (answer["operation_id"],
                                                           answer["kind"])


def test_the_openapi_document_describes_every_202_so(app: Any) -> None:
    for path, item in app.openapi()["paths"].items():
        for method, operation in item.items():
            accepted = operation.get("responses", {}).get("202")
            if accepted is None:
                continue
            schema = accepted["content"]["application/json"]["schema"]
            model = OWN_SHAPE.get((method.upper(), path), "OperationAccepted")
            assert schema == {"$ref": f"#/components/schemas/{model}"}, (method, path)
            assert "Location" in accepted["headers"], (method, path)


def test_a_dependency_change_names_its_invalidation_in_the_same_shape(
    client: Any, tenant: dict[str, Any]
) -> None:
    changed = client.put("/v1/dependencies/product.version", json={"value": "4.2"},
                         headers=tenant["app"]).json()
    invalidation = changed["invalidation"]
    assert set(invalidation) == {"operation_id", "kind", "status"}
    assert (invalidation["kind"], invalidation["status"]) == ("invalidate", "queued")


def test_a_keyed_maintenance_job_is_its_own_replayable_record(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    headers = {**tenant["compliance"], "Idempotency-Key": "decay-now"}
    first = client.post("/v1/maintenance/decay", headers=headers)
    again = client.post("/v1/maintenance/decay", headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.headers[REPLAYED] == "true" and again.json() == first.json()
    assert again.headers["Location"] == first.headers["Location"]
    rows = owner_conn.execute("SELECT kind, status, response_status FROM operation").fetchall()
    assert rows == [("maintenance.decay", "queued", 202)]


def test_a_job_accepted_without_a_key_has_the_digest_of_its_request(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.post("/v1/maintenance/consolidate", headers=tenant["compliance"])
    client.put("/v1/dependencies/plan", json={"value": "pro"}, headers=tenant["app"])
    rows = owner_conn.execute(
        "SELECT request_method, request_path, request_digest, idempotency_key FROM operation "
        "ORDER BY request_path").fetchall()
    assert [row[3] for row in rows] == [None, None]
    payloads = {"/v1/dependencies/plan": {"key": "plan"},
                "/v1/maintenance/consolidate": {"job": "consolidate"}}
    for method, path, digest, _ in rows:
        assert digest == request_digest(method, path, json.dumps(payloads[path]).encode())
