"""Every error is problem+json; nothing leaks a stack trace or SQL."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

PROBLEM = "application/problem+json"


def _is_problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert {"type", "title", "status", "detail"} <= body.keys()
    assert body["status"] == status
    assert body["type"].startswith("https://lethe.dev/problems/")
    return body


def test_unknown_path_is_problem_404(client: Any) -> None:
    _is_problem(client.get("/v1/nothing-here"), 404)


def test_wrong_method_is_problem_405(client: Any) -> None:
    _is_problem(client.delete("/v1/settings"), 405)


def test_malformed_json_is_422(client: Any, tenant: dict[str, Any]) -> None:
    response = client.patch(
        "/v1/settings", content=b'{"half_lives": ',
        headers={**tenant["compliance"], "Content-Type": "application/json"},
    )
    _is_problem(response, 422)


def test_unknown_fields_are_rejected(client: Any, tenant: dict[str, Any]) -> None:
    body = _is_problem(
        client.patch("/v1/settings", json={"surprise": 1}, headers=tenant["compliance"]), 422
    )
    assert any("surprise" in ".".join(e["loc"]) for e in body["errors"])
    _is_problem(
        client.patch("/v1/settings", json={"half_lives": {"weekly": 1}},
                     headers=tenant["compliance"]), 422,
    )


def test_invalid_uuid_in_path_is_422(client: Any, tenant: dict[str, Any]) -> None:
    _is_problem(client.get("/v1/operations/not-a-uuid", headers=tenant["app"]), 422)


def test_oversized_body_is_413(client: Any, tenant: dict[str, Any]) -> None:
    big = b'{"name": "' + b"x" * 2_000_000 + b'"}'
    response = client.post(
        "/v1/tenants", content=big,
        headers={**tenant["app"], "Content-Type": "application/json"},
    )
    _is_problem(response, 413)


def test_oversized_chunked_body_is_413(client: Any, tenant: dict[str, Any]) -> None:
    def chunks() -> Any:
        for _ in range(40):
            yield b"x" * 65536

    response = client.patch(
        "/v1/settings", content=chunks(),
        headers={**tenant["compliance"], "Content-Type": "application/json"},
    )
    _is_problem(response, 413)


def test_unhandled_error_is_generic_500(database: Any) -> None:
    from app.main import create_app

    app = create_app()

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("SELECT secret FROM vault WHERE token = 'hunter2'")

    with TestClient(app, raise_server_exceptions=False) as test_client:
        response = test_client.get("/boom")
    body = _is_problem(response, 500)
    assert "hunter2" not in response.text and "SELECT" not in response.text
    assert "Traceback" not in response.text
    assert body["type"].endswith("/internal-error")


def test_nul_bytes_in_text_are_422_not_500(client: Any, admin_headers: dict[str, str]) -> None:
    response = client.post("/v1/tenants", json={"name": "A\u0000B"}, headers=admin_headers)
    _is_problem(response, 422)


def test_a_database_that_cannot_be_reached_is_503_with_retry_after() -> None:
    """The one mapping of database errors: lost or refused connections (SQLAlchemy's, and the
    raw driver's of recall's pipeline) are 503 with Retry-After; any other error stays 500.
    `tests/faults/test_database_restart.py` restarts a real database under a real API."""
    import asyncio
    import json

    import psycopg
    from sqlalchemy import exc as sa_exc
    from starlette.requests import Request

    from app.core import errors

    request = Request({"type": "http", "method": "POST", "path": "/v1/memories",
                       "headers": []})

    def answer(exc: Exception) -> Any:
        return asyncio.run(errors._database_error(request, exc))

    for lost in (sa_exc.OperationalError("SELECT 1", {}, Exception("server closed")),
                 sa_exc.TimeoutError("pool exhausted"),
                 psycopg.OperationalError("connection refused")):
        response = answer(lost)
        assert response.status_code == 503
        assert response.headers["content-type"].startswith(PROBLEM)
        assert int(response.headers["retry-after"]) >= 1
        body = json.loads(response.body)
        assert body["type"].endswith("/service-unavailable") and body["status"] == 503
        assert "server closed" not in response.body.decode()
    refused = answer(sa_exc.IntegrityError("INSERT", {}, Exception("duplicate key")))
    assert refused.status_code == 500
