"""Property-based run of every documented operation against the live ASGI app.

All of schemathesis' default checks apply; above all, no input may produce a 5xx.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.core.parameters import ParameterLocation

from app.api import access
from app.main import create_app
from tests.api import case_inputs
from tests.api.routes import api_routes

# Built at collection: create_app() touches no database, so this needs no server yet.
APP = create_app()
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
# Operations for the admin token, as their routes declare it (app/api/access.py).
ADMIN_PATHS = {route.path_format for route in api_routes(APP)
               if any(d.access is access.Access.admin for d in access.declared(route.dependant))}


@pytest.mark.slow
@schema.parametrize()
# Derandomized: CI runs the same examples every time, so a landing never depends on a draw;
# widen max_examples locally to explore further.
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True)
def test_api_conforms_and_never_fails(
    case: Any, tenant: dict[str, Any], admin_headers: dict[str, str]
) -> None:
    headers = admin_headers if case.path in ADMIN_PATHS else tenant["compliance"]
    generated = dict(case.headers or {})
    if "Idempotency-Key" in generated:
        # Reusing a key with another body is a documented 422; tests/idempotency covers it.
        generated["Idempotency-Key"] = uuid.uuid4().hex
    case.headers = generated
    # In a query string every value is text: an "object" or "null" for a string filter is
    # serialized into a valid string, so negative query cases there cannot be told apart. A
    # case whose inputs were edited below is no longer the negative case it was generated as.
    # Headers are replaced by real credentials below, so a case negative in its headers
    # (a missing Authorization) reaches the server as a valid request.
    negative_unknowable = (case.method == "GET" and bool(case.query)) or (
        case._meta is not None and case._meta.is_negative_at(ParameterLocation.HEADER)
    )
    # A batch validates each item on its own and answers an invalid one 422 in its slot of
    # a 200 (docs/api.md, "Batch"); only the envelope's own refusals are the request's.
    item_negative = case.path == "/v1/memories/batch" and case_inputs.negative_items_only(case)
    edited = (case_inputs.drop_state_dependent_inputs(case) or negative_unknowable
              or item_negative)
    excluded = case_inputs.excluded_checks(case, APP, edited=edited)
    case.call_and_validate(headers=headers, excluded_checks=excluded)
