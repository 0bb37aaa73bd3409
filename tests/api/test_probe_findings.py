"""What probing the API from outside found, one test each: every answer is problem+json with
the status the contract names, never a 500, a bare text body or a silently mangled input."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from psycopg import sql

from app.api import access
from tests.api.routes import api_routes

PROBLEM = "application/problem+json"
NOT_JSON_NUMBERS = ("NaN", "Infinity", "-Infinity", "1e999")
INT32_MAX = 2**31 - 1


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    return body


def _json(headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "Content-Type": "application/json"}


def _remember(client: Any, tenant: dict[str, Any], text: str = "Lives in Oslo") -> Any:
    response = client.post("/v1/memories", json={"subject": "user:1", "text": text},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    return response


@pytest.mark.parametrize("number", NOT_JSON_NUMBERS)
def test_metadata_number_that_is_not_json_is_422_on_create(
    client: Any, tenant: dict[str, Any], owner_conn: Any, number: str
) -> None:
    body = '{"subject": "user:1", "text": "Likes tea", "metadata": {"a": N}}'.replace("N", number)
    _problem(client.post("/v1/memories", content=body, headers=_json(tenant["app"])), 422)
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0


@pytest.mark.parametrize("number", NOT_JSON_NUMBERS)
def test_metadata_number_that_is_not_json_is_422_on_patch(
    client: Any, tenant: dict[str, Any], number: str
) -> None:
    memory = _remember(client, tenant).json()
    response = client.patch(
        f"/v1/memories/{memory['id']}",
        content='{"metadata": {"nested": [N]}}'.replace("N", number),
        headers={**_json(tenant["app"]), "If-Match": f'"{memory["revision"]}"'},
    )
    _problem(response, 422)


@pytest.mark.parametrize("number", NOT_JSON_NUMBERS)
def test_metadata_number_that_is_not_json_is_422_in_ingest_items(
    client: Any, tenant: dict[str, Any], owner_conn: Any, number: str
) -> None:
    body = ('{"subject": "user:1", "memories": [{"text": "Likes tea", "metadata": {"a": N}}]}'
            .replace("N", number))
    response = client.post("/v1/ingest", content=body,
                           headers={**_json(tenant["app"]), "Idempotency-Key": "nan-test"})
    _problem(response, 422)
    assert owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 0


def _request_integers(schema: Any, document: dict[str, Any], where: str,
                      seen: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every integer schema reachable from ``schema``, with where it was found."""
    if isinstance(schema, list):
        return [hit for item in schema for hit in _request_integers(item, document, where, seen)]
    if not isinstance(schema, dict):
        return []
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            return []
        name = ref.rsplit("/", 1)[-1]
        return _request_integers(document["components"]["schemas"][name], document,
                                 f"{where} → {name}", seen | {ref})
    found = [(where, schema)] if schema.get("type") == "integer" else []
    for key, value in schema.items():
        if key in ("properties", "patternProperties"):
            for name, sub in value.items():
                found += _request_integers(sub, document, f"{where}.{name}", seen)
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "prefixItems"):
            found += _request_integers(value, document, where, seen)
    return found


def test_every_integer_a_request_carries_is_bounded_in_the_openapi_document(app: Any) -> None:
    document = app.openapi()
    unbounded = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            where = f"{method.upper()} {path}"
            hits = []
            for parameter in operation.get("parameters", []):
                hits += _request_integers(parameter.get("schema", {}), document,
                                          f"{where} {parameter['name']}", set())
            for media in operation.get("requestBody", {}).get("content", {}).values():
                hits += _request_integers(media.get("schema", {}), document, where, set())
            unbounded += [place for place, schema in hits
                          if "maximum" not in schema or "minimum" not in schema]
    assert not unbounded, "\n".join(unbounded)


def test_revert_to_a_seq_beyond_any_stored_integer_is_422(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = _remember(client, tenant).json()
    response = client.post(
        f"/v1/memories/{memory['id']}/revert", json={"seq": INT32_MAX + 1},
        headers={**tenant["app"], "If-Match": f'"{memory["revision"]}"'},
    )
    _problem(response, 422)


def test_an_expected_revision_beyond_any_stored_integer_is_422(
    client: Any, tenant: dict[str, Any]
) -> None:
    response = client.post("/v1/memories", json={
        "subject": "user:1", "text": "Lives in Oslo", "key": "home_city",
        "expected_revision": INT32_MAX + 1}, headers=tenant["app"])
    _problem(response, 422)


def test_an_unhandled_error_closes_the_connection(database: Any) -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app

    app = create_app()

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("boom")

    with TestClient(app, raise_server_exceptions=False) as test_client:
        response = test_client.get("/boom")
    _problem(response, 500)
    assert response.headers["connection"] == "close"


def _guarded_operations(app: Any) -> list[tuple[str, str, access.Access]]:
    found = []
    for route in api_routes(app):
        (declaration,) = access.declared(route.dependant)
        if declaration.access is access.Access.public:
            continue
        for method in sorted(route.methods):
            found.append((method, route.path_format, declaration.access))
    return found


def _concrete(path: str) -> str:
    # Path parameters get values that are themselves invalid where a UUID is expected.
    import re

    return re.sub(r"\{[^}]+\}", "not-a-valid-id", path)


def test_every_endpoint_authenticates_before_validating(client: Any, app: Any) -> None:
    wrong: list[str] = []
    operations = _guarded_operations(app)
    assert len(operations) > 40
    for method, path, _ in operations:
        for headers in ({}, {"Authorization": "Bearer lethe_unknown_key"}):
            response = client.request(
                method, _concrete(path) + "?limit=0", content=b'{"surprise": ',
                headers={**headers, "Content-Type": "application/json"},
            )
            if response.status_code != 401 or not response.headers["content-type"].startswith(
                    PROBLEM):
                wrong.append(f"{method} {path}: {response.status_code}")
    assert wrong == []


def test_every_endpoint_checks_the_role_before_validating(
    client: Any, app: Any, tenant: dict[str, Any]
) -> None:
    wrong: list[str] = []
    for method, path, needed in _guarded_operations(app):
        if needed is access.Access.app:
            continue
        response = client.request(
            method, _concrete(path) + "?limit=0", content=b'{"surprise": ',
            headers={**tenant["app"], "Content-Type": "application/json"},
        )
        if response.status_code != 403:
            wrong.append(f"{method} {path}: {response.status_code}")
    assert wrong == []


def test_recall_without_a_key_and_with_an_invalid_body_is_401(client: Any) -> None:
    _problem(client.post("/v1/recall", json={"subject": ""}), 401)


def test_creating_a_tenant_with_a_tenant_key_is_403(client: Any, tenant: dict[str, Any]) -> None:
    _problem(client.post("/v1/tenants", json={"name": "Evil"}, headers=tenant["compliance"]), 403)
    _problem(client.post("/v1/tenants", json={"name": "Evil"}, headers=tenant["app"]), 403)
    _problem(client.post("/v1/tenants", json={"name": "Evil"},
                         headers={"Authorization": "Bearer nonsense"}), 401)


def test_an_idempotency_key_outside_printable_ascii_is_problem_422(
    client: Any, tenant: dict[str, Any]
) -> None:
    # \x7f passes the test client's header check; control characters below 0x20 are refused
    # by the HTTP parser itself (tests/api/test_http_layer.py).
    response = client.post("/v1/memories", json={"subject": "user:1", "text": "Likes tea"},
                           headers={**tenant["app"], "Idempotency-Key": "key\x7f"})
    _problem(response, 422)


@pytest.mark.parametrize("query", ["subject=%FF%FE", "key=%C3", "source=caf%E9"])
def test_a_query_string_that_is_not_utf8_is_422(
    client: Any, tenant: dict[str, Any], query: str
) -> None:
    _problem(client.get(f"/v1/memories?{query}", headers=tenant["app"]), 422)


def test_a_path_that_is_not_utf8_is_422(client: Any, tenant: dict[str, Any]) -> None:
    response = client.put("/v1/dependencies/%FF", json={"value": "x"}, headers=tenant["app"])
    _problem(response, 422)


def test_utf8_in_a_query_string_still_works(client: Any, tenant: dict[str, Any]) -> None:
    client.post("/v1/memories", json={"subject": "user:ø", "text": "Likes tea"},
                headers=tenant["app"])
    response = client.get("/v1/memories?subject=user%3A%C3%B8", headers=tenant["app"])
    assert response.status_code == 200
    assert [m["subject"] for m in response.json()["data"]] == ["user:ø"]


def test_the_openapi_document_describes_the_redacted_replay(app: Any) -> None:
    document = app.openapi()
    created = document["paths"]["/v1/memories"]["post"]["responses"]["201"]
    schema = created["content"]["application/json"]["schema"]
    refs = {option.get("$ref", "").rsplit("/", 1)[-1] for option in schema["anyOf"]}
    assert {"MemoryWritten", "RedactedAnswer"} <= refs
    redacted = document["components"]["schemas"]["RedactedAnswer"]
    assert set(redacted["required"]) == {"id", "state"}


def test_redacted_replay_matches_the_documented_shape(
    client: Any, tenant: dict[str, Any]
) -> None:
    key = {"Idempotency-Key": uuid.uuid4().hex}
    body = {"subject": "user:1", "text": "Lives in Oslo"}
    first = client.post("/v1/memories", json=body, headers={**tenant["app"], **key})
    assert first.status_code == 201
    client.delete(f"/v1/memories/{first.json()['id']}", headers=tenant["app"])
    replay = client.post("/v1/memories", json=body, headers={**tenant["app"], **key})
    assert replay.status_code == 201
    assert replay.json() == {"id": first.json()["id"], "state": "forgotten"}


@pytest.mark.parametrize("path", ["/v1/memories/{memory_id}", "/v1/memories/{memory_id}/revert"])
def test_if_match_is_required_in_the_openapi_document_where_428_is_answered(
    app: Any, path: str
) -> None:
    item = app.openapi()["paths"][path]
    operation = item.get("patch") or item["post"]
    (if_match,) = [p for p in operation["parameters"] if p["name"] == "If-Match"]
    assert if_match["required"] is True
    assert "428" in operation["responses"]


def test_an_edit_without_if_match_is_still_428(client: Any, tenant: dict[str, Any]) -> None:
    memory = _remember(client, tenant).json()
    _problem(client.patch(f"/v1/memories/{memory['id']}", json={"text": "Lives in Bergen"},
                          headers=tenant["app"]), 428)
    _problem(client.post(f"/v1/memories/{memory['id']}/revert", json={"seq": 1},
                         headers=tenant["app"]), 428)


# Every mutating route that takes no request body. A body sent anyway is still digested with
# the Idempotency-Key, so the same key with another body is refused as reused.
BODYLESS = [
    ("DELETE", "/v1/api-keys/{key_id}"),
    ("DELETE", "/v1/staff/{staff_id}"),
    ("DELETE", "/v1/memories/{memory_id}"),
    ("DELETE", "/v1/sources/exclusions/{exclusion_id}"),
    ("POST", "/v1/sessions/{session}/close"),
    ("POST", "/v1/memories/{memory_id}/confirm"),
    ("POST", "/v1/memories/{memory_id}/reject"),
    ("POST", "/v1/memories/{memory_id}/quarantine"),
    ("POST", "/v1/memories/{memory_id}/release"),
    ("POST", "/v1/maintenance/{job}"),
    ("DELETE", "/v1/legal-holds/{hold_id}"),
    ("POST", "/v1/erasure-requests/{request_id}/approve"),
    ("POST", "/v1/erasure-requests/{request_id}/cancel"),
    ("DELETE", "/v1/artifacts/{artifact_id}"),
    ("POST", "/v1/artifacts/{artifact_id}/erased"),
    ("DELETE", "/v1/webhooks/{webhook_id}"),
    ("DELETE", "/compat/mem0/memories/{memory_id}"),
    ("DELETE", "/compat/mem0/memories"),
]
# 1,000 levels already pass CPython 3.11's recursion limit; this many pass any version's.
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def _stored(owner_conn: Any) -> tuple[Any, ...]:
    """What a request could have changed: every table's size and every memory's state."""
    tables = [row[0] for row in owner_conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")]
    counts = owner_conn.execute(sql.SQL(" UNION ALL ").join(
        sql.SQL("SELECT {}, count(*) FROM {}").format(sql.Literal(name), sql.Identifier(name))
        for name in tables)).fetchall()
    memories = owner_conn.execute(
        "SELECT id, state, revision, session FROM memory ORDER BY id").fetchall()
    return counts, memories


def test_bodyless_lists_every_mutating_route_without_a_body(app: Any) -> None:
    found = {(method, route.path_format) for route in api_routes(app)
             for method in route.methods
             if method in ("POST", "PUT", "PATCH", "DELETE") and route.body_field is None}
    assert found == set(BODYLESS)


@pytest.mark.parametrize(("method", "path"), BODYLESS)
def test_a_deeply_nested_body_with_an_idempotency_key_is_422_where_no_body_is_taken(
    client: Any, tenant: dict[str, Any], owner_conn: Any, method: str, path: str
) -> None:
    written = client.post("/v1/memories", json={
        "subject": "user:1", "text": "Compares flights to Rome", "volatility": "working",
        "session": "run-1"}, headers=tenant["app"])
    assert written.status_code == 201, written.text
    names = {name: uuid.uuid4() for name in ("key_id", "staff_id", "exclusion_id", "hold_id",
                                             "request_id", "artifact_id", "webhook_id")}
    url = path.format(memory_id=written.json()["id"], session="run-1", job="decay", **names)
    before = _stored(owner_conn)
    response = client.request(
        method, url, params={"user_id": "user:1"} if path == "/compat/mem0/memories" else None,
        content=DEEP_JSON, headers={**tenant["compliance"], "Content-Type": "application/json",
                                    "Idempotency-Key": "deep"})
    assert _problem(response, 422)["type"].endswith("/validation-error")
    assert _stored(owner_conn) == before


MEM0_NUMBERS = ("NaN", "Infinity", "1e400")


@pytest.mark.parametrize("number", MEM0_NUMBERS)
def test_metadata_number_that_is_not_json_is_422_on_a_mem0_add(
    client: Any, tenant: dict[str, Any], owner_conn: Any, number: str
) -> None:
    body = ('{"user_id": "user:1", "messages": [{"role": "user", "content": "I like tea"}], '
            '"metadata": {"a": [N]}}').replace("N", number)
    response = client.post("/compat/mem0/memories", content=body, headers=_json(tenant["app"]))
    assert _problem(response, 422)["type"].endswith("/validation-error")
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0


@pytest.mark.parametrize("number", MEM0_NUMBERS)
def test_filter_number_that_is_not_json_is_422_on_a_mem0_search(
    client: Any, tenant: dict[str, Any], number: str
) -> None:
    body = '{"user_id": "user:1", "query": "tea", "filters": {"a": N}}'.replace("N", number)
    response = client.post("/compat/mem0/search", content=body, headers=_json(tenant["app"]))
    assert _problem(response, 422)["type"].endswith("/validation-error")


# \x7f passes the test client's header check (see above); the others are plainly out of range.
BAD_KEYS = {"too-long": "k" * 256, "not-printable": "key\x7f", "empty": ""}
READS_SENT_AS_POSTS = {
    "/v1/recall": {"subject": "user:1", "query": "tea", "mode": "keyword"},
    "/compat/mem0/search": {"user_id": "user:1", "query": "tea"},
}


@pytest.mark.parametrize("key", list(BAD_KEYS.values()), ids=list(BAD_KEYS))
@pytest.mark.parametrize("path", list(READS_SENT_AS_POSTS))
def test_a_read_sent_as_a_post_refuses_an_idempotency_key_a_write_refuses(
    client: Any, tenant: dict[str, Any], path: str, key: str
) -> None:
    headers = {**tenant["app"], "Idempotency-Key": key}
    write = client.post("/v1/memories", json={"subject": "user:1", "text": "Likes tea"},
                        headers=headers)
    read = client.post(path, json=READS_SENT_AS_POSTS[path], headers=headers)
    assert _problem(read, 422)["type"] == _problem(write, 422)["type"]


def test_a_mem0_message_lethe_counts_as_blank_is_skipped_like_spaces(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    # U+FEFF is no whitespace to Python's `str.strip`, but blank to Lethe's text rule.
    answers = [client.post("/compat/mem0/memories", json={
        "user_id": "user:1", "messages": [{"role": "user", "content": content}]},
        headers=tenant["app"]) for content in ("   ", "\ufeff")]
    assert answers[0].status_code == 200, answers[0].text
    assert [(a.status_code, a.json()) for a in answers] == [(200, answers[0].json())] * 2
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0
