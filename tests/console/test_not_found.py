"""A console URL with a malformed ID answers the console's 404 page, never FastAPI's JSON 422:
every console route with a path parameter, found from the console app itself."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi import routing
from fastapi.routing import APIRoute

from console.app import create_console
from tests.console.conftest import csrf_token, sign_in_client

MALFORMED = "not-a-uuid"


def _routes_with_path_parameters() -> list[tuple[str, str]]:
    found = []
    # This FastAPI keeps included routers' routes behind an include record.
    flatten = getattr(routing, "_iter_included_route_candidates", None)
    routes = create_console().routes
    for route in (flatten(routes) if flatten is not None else routes):
        if isinstance(route, APIRoute) and "{" in route.path:
            found += [(method, route.path) for method in sorted(route.methods)]
    return found


ROUTES = _routes_with_path_parameters()


def test_the_console_has_routes_with_ids() -> None:
    # Guards the parametrization below against finding nothing.
    paths = {path for _, path in ROUTES}
    assert {"/memories/{memory_id}", "/erasures/{request_id}",
            "/staff/{staff_id}/remove"} <= paths


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_malformed_id_answers_the_consoles_404_page(
    client: Any, staff_officer: dict[str, Any], method: str, path: str
) -> None:
    sign_in_client(client, staff_officer)
    url = "/console" + re.sub(r"\{[^}]+\}", MALFORMED, path)
    data = {"csrf_token": csrf_token(client, "/console/")} if method == "POST" else None
    response = client.request(method, url, data=data, follow_redirects=False)
    assert response.status_code == 404, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "No such" in response.text
    # The member's menu stays: it is the console's page, not a bare error.
    assert staff_officer["email"] in response.text


def test_a_malformed_id_still_asks_a_stranger_to_sign_in(client: Any) -> None:
    response = client.get(f"/console/memories/{MALFORMED}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/console/login"
