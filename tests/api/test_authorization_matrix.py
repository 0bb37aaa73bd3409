"""Every operation of the OpenAPI document × every kind of caller → the status the contract
says, and nothing changed in the database by a refused request.

Who may call an operation is read from its route's one declaration (`app/api/access.py`), so
a new endpoint is covered without editing this file, and an endpoint that declares nobody
fails here. Callers: no key, an unknown key, a revoked key, the admin token, the tenant's app
and compliance keys, and another tenant's keys sent with this tenant's IDs and subjects.
Contract (docs/api.md): missing, unknown or revoked key → 401; a key of the wrong role → 403; a
resource of another tenant is indistinguishable from a missing one → 404.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from app.api import access
from app.main import create_app
from tests.api.routes import api_routes

APP = create_app()
DOCUMENT = APP.openapi()
SUBJECT = "user:matrix"
SECRET = "Matrix secret: the vault code is 4711"
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
REFUSALS = (401, 403, 404)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    declarations: tuple[access.Declaration, ...]

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = DOCUMENT["paths"][self.path][self.method.lower()]
        return spec

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


def _operations() -> list[Operation]:
    found = []
    for route in api_routes(APP):
        declarations = tuple(access.declared(route.dependant))
        for method in sorted(route.methods):
            found.append(Operation(method, route.path_format, declarations))
    return found


OPERATIONS = _operations()


def test_the_matrix_covers_every_documented_operation() -> None:
    documented = {(method.upper(), path) for path, item in DOCUMENT["paths"].items()
                  for method in item}
    assert documented == {(op.method, op.path) for op in OPERATIONS}


@pytest.mark.parametrize("operation", OPERATIONS, ids=str)
def test_every_operation_declares_who_may_call_it(operation: Operation) -> None:
    assert len(operation.declarations) == 1, (
        f"{operation} must list exactly one access dependency (app/api/access.py)")


# ---------------------------------------------------------------------------------------------
# The world: a tenant with one of everything, another tenant, and callers of every kind.


@dataclass
class World:
    tenant: dict[str, Any]
    other: dict[str, Any]
    revoked: dict[str, str]
    admin: dict[str, str]
    # Collection path (the POST that created it) → an ID this tenant holds there.
    ids: dict[str, str] = field(default_factory=dict)

    def callers(self) -> dict[str, dict[str, str]]:
        return {
            "no key": {},
            "unknown key": {"Authorization": "Bearer lethe_app_" + uuid.uuid4().hex},
            "revoked key": self.revoked,
            "admin token": self.admin,
            "app key": self.tenant["app"],
            "compliance key": self.tenant["compliance"],
            "other tenant's app key": self.other["app"],
            "other tenant's compliance key": self.other["compliance"],
        }


def _created(client: Any, path: str, body: dict[str, Any], headers: dict[str, str],
             world: World, extra: dict[str, str] | None = None) -> dict[str, Any]:
    response = client.post(path, json=body, headers={**headers, **(extra or {})})
    assert response.status_code in (200, 201, 202), (path, response.text)
    answer: dict[str, Any] = response.json()
    world.ids[path] = str(answer.get("id") or answer.get("operation_id"))
    return answer


@pytest.fixture
def world(client: Any, new_tenant: Any, admin_headers: dict[str, str]) -> World:
    tenant = new_tenant("Initech")
    other = new_tenant("Hooli")
    app, compliance = tenant["app"], tenant["compliance"]
    spare = client.post("/v1/api-keys", json={"role": "app"}, headers=compliance).json()
    assert client.delete(f"/v1/api-keys/{spare['id']}", headers=compliance).status_code == 204
    world = World(tenant, other, {"Authorization": f"Bearer {spare['key']}"}, admin_headers)
    memory = _created(client, "/v1/memories", {
        "subject": SUBJECT, "text": SECRET, "source": "conversation:matrix",
        "depends_on": {"plan": "gold"}}, app, world)
    held = client.post("/v1/memories", json={"subject": SUBJECT, "text": "Owns a red bicycle"},
                       headers=app).json()
    _created(client, "/v1/legal-holds", {"memory_ids": [held["id"]], "reason": "matrix"},
             compliance, world)
    _created(client, "/v1/api-keys", {"role": "app"}, compliance, world)
    _created(client, "/v1/sources/exclusions", {"source": "crm:matrix", "reason": "matrix"},
             compliance, world)
    _created(client, "/v1/artifacts", {"kind": "summary", "ref": "row:1",
                                       "derived_from": [memory["id"]]}, app, world)
    _created(client, "/v1/staff", {"email": "officer@initech.test", "role": "officer"},
             compliance, world)
    _created(client, "/v1/access-requests", {"subject": SUBJECT}, app, world)
    _created(client, "/v1/ingest", {"subject": SUBJECT, "memories": [{"text": "Likes jazz"}]},
             app, world, {"Idempotency-Key": "matrix-ingest"})
    world.ids["/v1/operations"] = world.ids["/v1/ingest"]
    # The mem0-compatible routes name the same memories.
    world.ids["/compat/mem0/memories"] = world.ids["/v1/memories"]
    if "/v1/erasure-requests" in DOCUMENT["paths"]:
        _created(client, "/v1/erasure-requests", {"subject": "user:leaving"}, app, world)
    client.put("/v1/dependencies/plan", json={"value": "gold"}, headers=app)
    world.ids["/v1/dependencies"] = "plan"
    return world


# ---------------------------------------------------------------------------------------------
# Requests built from the document alone.


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _instance(schema: dict[str, Any], name: str, fill: Fill) -> Any:
    """The smallest value ``schema`` accepts, with this tenant's subject and IDs in it."""
    schema = _resolve(schema)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf"):
        options = [o for o in schema.get(combinator, []) if _resolve(o).get("type") != "null"]
        if options and "type" not in schema and "properties" not in schema:
            return _instance(options[0], name, fill)
    if schema.get("allOf"):
        return _instance(schema["allOf"][0], name, fill)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        required = list(schema.get("required", []))
        for branch in schema.get("anyOf", [])[:1]:
            required += branch.get("required", [])
        properties = schema.get("properties", {})
        return {key: _instance(properties.get(key, {}), key, fill) for key in required}
    if kind == "array":
        return [_instance(schema.get("items", {}), name, fill)
                for _ in range(schema.get("minItems", 0))]
    if kind == "integer" or kind == "number":
        return max(schema.get("minimum", 1), 1)
    if kind == "boolean":
        return True
    return fill.string(name, schema)


@dataclass
class Fill:
    """Values for a request: this tenant's subject and IDs, or fresh ones nobody holds."""

    subject: str
    memory_id: str
    # Every other string is new in each request, so no create collides with an earlier one.
    salt: str = field(default_factory=lambda: uuid.uuid4().hex[:10])

    def string(self, name: str, schema: dict[str, Any]) -> str:
        if schema.get("format") == "uuid":
            return self.memory_id
        if schema.get("format") == "date-time":
            return datetime.now(UTC).isoformat()
        if name == "subject":
            return self.subject
        if name == "url":
            return "https://hooks.example.com/lethe"
        if name == "email":
            return f"someone-{self.salt}@example.com"
        return f"matrix-{self.salt}"


def _path_value(operation: Operation, name: str, world: World, fresh: bool) -> str:
    parameter = next(p for p in operation.spec.get("parameters", [])
                     if p["in"] == "path" and p["name"] == name)
    schema = _resolve(parameter["schema"])
    if schema.get("enum"):
        return str(schema["enum"][0])
    collection = operation.path.split("/{", 1)[0]
    if schema.get("format") == "uuid":
        return str(uuid.uuid4()) if fresh else world.ids.get(collection, str(uuid.uuid4()))
    return "fresh-" + uuid.uuid4().hex[:8] if fresh else world.ids.get(collection, "matrix")


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    headers: dict[str, str]
    body: Any


def _request(operation: Operation, world: World, *, fresh: bool = False) -> Request:
    fill = Fill(subject="user:" + uuid.uuid4().hex[:8] if fresh else SUBJECT,
                memory_id=str(uuid.uuid4()) if fresh else world.ids["/v1/memories"])
    path = re.sub(r"\{([^}]+)\}", lambda m: _path_value(operation, m[1], world, fresh),
                  operation.path)
    query: dict[str, Any] = {}
    headers: dict[str, str] = {}
    for parameter in operation.spec.get("parameters", []):
        if parameter["in"] == "query" and (parameter.get("required") or
                                          parameter["name"] == "subject"):
            query[parameter["name"]] = _instance(parameter["schema"], parameter["name"], fill)
        if parameter["in"] == "header" and parameter.get("required"):
            headers[parameter["name"]] = ('"1"' if parameter["name"] == "If-Match"
                                          else uuid.uuid4().hex)
    body = None
    content = operation.spec.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        body = _instance(content["application/json"]["schema"], "", fill)
    url = path + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")
    return Request(operation.method, url, headers, body)


def _send(client: Any, request: Request, caller: dict[str, str]) -> Any:
    return client.request(request.method, request.url, json=request.body,
                          headers={**request.headers, **caller})


# ---------------------------------------------------------------------------------------------
# What the database holds.


def _snapshot(owner_conn: Any, tenant_id: str) -> dict[str, Any]:
    """Row counts of every table (all tenants, and this tenant's) and every audit chain head."""
    tables = [row[0] for row in owner_conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
        "AND tablename NOT IN ('alembic_version', 'kombu_queue', 'kombu_message')")]
    scoped = {row[0] for row in owner_conn.execute(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
        "AND column_name = 'tenant_id'")}
    counts = {}
    for table in tables:
        counts[table] = owner_conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        if table in scoped:
            counts[f"{table} (tenant)"] = owner_conn.execute(
                f'SELECT count(*) FROM "{table}" WHERE tenant_id = %s', (tenant_id,)).fetchone()[0]
    heads = owner_conn.execute(
        "SELECT DISTINCT ON (tenant_id) tenant_id::text, seq, hash FROM audit_event "
        "ORDER BY tenant_id, seq DESC").fetchall()
    return {"counts": counts, "audit heads": sorted(heads)}


def _tenant_part(snapshot: dict[str, Any], tenant_id: str) -> dict[str, Any]:
    return {"counts": {k: v for k, v in snapshot["counts"].items() if k.endswith("(tenant)")},
            "audit head": [h for h in snapshot["audit heads"] if h[0] == tenant_id]}


def _normalized(response: Any) -> Any:
    try:
        body = response.json()
    except ValueError:
        return response.text
    return json.loads(UUID_RE.sub("<id>", json.dumps(body)))


# ---------------------------------------------------------------------------------------------
# The matrix.


def _expected(access_needed: access.Access, caller: str) -> int | None:
    """The refusal the contract names for ``caller``, or None when it may call."""
    if access_needed is access.Access.public:
        return None
    if caller in ("no key", "unknown key", "revoked key"):
        return 401
    if access_needed is access.Access.admin:
        return None if caller == "admin token" else 403
    if caller == "admin token":
        return 401
    if access_needed is access.Access.compliance and caller.endswith("app key"):
        return 403
    return None


@pytest.mark.parametrize("operation", OPERATIONS, ids=str)
def test_each_caller_gets_what_the_contract_says(
    operation: Operation, world: World, client: Any, owner_conn: Any
) -> None:
    assert len(operation.declarations) == 1, f"{operation} declares who may call it"
    needed = operation.declarations[0].access
    has_path_id = any(
        p["in"] == "path" and _resolve(p["schema"]).get("format") == "uuid"
        for p in operation.spec.get("parameters", []))
    wrong: list[str] = []
    callers = world.callers()
    # Refusals first: they change nothing, so each finds the world as it was built.
    for caller, headers in callers.items():
        refusal = _expected(needed, caller)
        foreign = caller.startswith("other tenant") and refusal is None
        if refusal is None and not foreign:
            continue
        before = _snapshot(owner_conn, world.tenant["id"])
        response = _send(client, _request(operation, world), headers)
        after = _snapshot(owner_conn, world.tenant["id"])
        if foreign:
            wrong += _foreign_wrongs(operation, world, client, caller, headers, response,
                                     before, after, has_path_id)
            continue
        if response.status_code != refusal:
            wrong.append(f"{caller}: {response.status_code}, expected {refusal}")
        elif not response.headers["content-type"].startswith("application/problem+json"):
            wrong.append(f"{caller}: {refusal} not problem+json")
        if before != after:
            wrong.append(f"{caller}: refused, yet the database changed")
    for caller, headers in callers.items():
        if _expected(needed, caller) is None and not caller.startswith("other tenant"):
            response = _send(client, _request(operation, world), headers)
            if response.status_code in (401, 403) or response.status_code >= 500:
                wrong.append(f"{caller}: {response.status_code} ({response.text[:120]})")
    assert not wrong, f"{operation}:\n" + "\n".join(wrong)


def _foreign_wrongs(
    operation: Operation, world: World, client: Any, caller: str, headers: dict[str, str],
    response: Any, before: dict[str, Any], after: dict[str, Any], has_path_id: bool,
) -> Iterator[str]:
    """Another tenant's key with this tenant's IDs and subjects: answered as if they did not
    exist (the same as for IDs and subjects nobody holds), and this tenant untouched. A path
    naming a resource by UUID is a 404 (or the 422 of a body this file could not build); names
    such as a dependency key or a job are the caller's own namespace."""
    tenant_id = world.tenant["id"]
    if _tenant_part(before, tenant_id) != _tenant_part(after, tenant_id):
        yield f"{caller}: this tenant's rows changed"
    if SECRET.lower() in response.text.lower():
        yield f"{caller}: the answer shows this tenant's memory text"
    if has_path_id:
        if response.status_code == 404 and before != after:
            yield f"{caller}: 404, yet the database changed"
        if response.status_code not in (404, 422):
            yield f"{caller}: {response.status_code} for another tenant's ID, expected 404"
    baseline = _send(client, _request(operation, world, fresh=True), headers)
    # A create may answer 200 instead of 202 for what the caller itself filed before (an
    # erasure of a subject it already has open): the caller's own state, not this tenant's.
    both_created = (operation.method == "POST"
                    and baseline.status_code // 100 == response.status_code // 100 == 2)
    if baseline.status_code != response.status_code and not both_created:
        yield (f"{caller}: {response.status_code} with this tenant's IDs, "
               f"{baseline.status_code} with IDs nobody holds")
    elif operation.method == "GET" and _normalized(baseline) != _normalized(response):
        yield f"{caller}: the answer differs from one about IDs nobody holds"
