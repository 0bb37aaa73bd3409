"""What a generated case's checks must leave out because the outcome depends on stored state
no schema can express; shared by the per-operation and the stateful schemathesis runs."""

from __future__ import annotations

import re
import uuid
from typing import Any

from schemathesis.specs.openapi.checks import (
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
)


def excluded_checks(case: Any, app: Any, *, edited: bool) -> list[Any]:
    """The checks that cannot judge ``case``; ``edited``: its inputs were changed after it was
    generated (by `drop_state_dependent_inputs`, say), so it is no longer the negative case it
    was generated as."""
    excluded = [negative_data_rejection] if edited else []
    if (case.method, case.path) in ACCEPTED_BY_STATE:
        excluded.append(positive_data_acceptance)
    if _requires_if_match(case, app):
        # The contract answers a missing If-Match with 428, which this check does not know.
        excluded.append(missing_required_header)
    return excluded


# Creates that no generated body can make acceptable: an artifact derives from memories that
# must exist, a webhook URL must resolve to public addresses. Other tests cover both.
# mem0's list and delete-all need `user_id` or `agent_id`: one of two query parameters, which
# OpenAPI cannot require (bodies say it with `anyOf`). tests/compat covers the refusal.
ACCEPTED_BY_STATE = {("POST", "/v1/artifacts"), ("POST", "/v1/webhooks"),
                     ("GET", "/compat/mem0/memories"), ("DELETE", "/compat/mem0/memories")}


def _requires_if_match(case: Any, app: Any) -> bool:
    # Some checks send methods the document does not list (TRACE): those require nothing.
    operation = app.openapi()["paths"].get(case.path, {}).get(case.method.lower(), {})
    parameters = operation.get("parameters", [])
    return any(p["name"] == "If-Match" and p.get("required") for p in parameters)


def drop_state_dependent_inputs(case: Any) -> bool:
    """Remove inputs whose validity depends on stored state, which no schema can express.

    A stale `expected_revision` is a documented 412; `supersedes`/`derived_from` naming
    memories that do not exist and a cursor this server never issued are documented 422s.
    The positive-data check would count each as a valid request rejected; other tests cover
    them, as is an expiry already past. Says whether anything was dropped.
    """
    body = case.body if isinstance(case.body, dict) else {}
    before = (dict(body), dict(case.query) if isinstance(case.query, dict) else None)
    revision = body.get("expected_revision")
    if type(revision) in (int, float) and revision >= 1:
        body.pop("expected_revision")
    for field in ("supersedes", "derived_from"):
        ids = body.get(field)
        if isinstance(ids, list) and len(ids) <= 100 and all(_is_uuid(v) for v in ids):
            body.pop(field)
    ids = body.get("memory_ids")
    if case.path == "/v1/legal-holds" and isinstance(ids, list) and all(map(_is_uuid, ids)):
        # A hold's memory IDs must name memories of the tenant (a documented 422): hold a
        # subject instead, which the schema alone decides.
        body.pop("memory_ids")
        body["subject"] = "user:held"
    if case.path.endswith("/forget") and body.get("delete") is False:
        # Without delete, whether excluding can work depends on the memory having a source
        # (and both switches off is a documented 422): state no schema can express.
        body.pop("delete")
    # Whether an expiry is valid depends on the clock (a time already past is a documented
    # 422 `expiry-in-past`), which no schema can express: tests/memories/test_expiry.py.
    items = body.get("items") if isinstance(body.get("items"), list) else []
    for holder in [body, *[item for item in items if isinstance(item, dict)]]:
        for field in ("expires_at", "expiration_date"):
            if isinstance(holder.get(field), str):
                holder.pop(field)
    query = case.query if isinstance(case.query, dict) else {}
    if isinstance(query.get("cursor"), str):
        query.pop("cursor")
    return before != (body, dict(case.query) if isinstance(case.query, dict) else None)


def negative_items_only(case: Any) -> bool:
    """A batch body whose envelope is valid (1 to 100 items, nothing else)."""
    body = case.body
    return (isinstance(body, dict) and set(body) == {"memories"}
            and isinstance(body["memories"], list) and 1 <= len(body["memories"]) <= 100)


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


def well_formed_if_match(case: Any) -> bool:
    """Make a generated If-Match one strong ETag (`"1"`): the schema says only "a string", the
    contract answers anything else 400, and a stale revision is a documented 412. An ETag a
    link carried from an earlier answer is kept. Says whether anything was changed."""
    headers = dict(case.headers or {})
    value = headers.get("If-Match")
    if value is None or re.fullmatch(r'"[0-9]+"', str(value)):
        return False
    headers["If-Match"] = '"1"'
    case.headers = headers
    return True
