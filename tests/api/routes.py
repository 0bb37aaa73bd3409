"""The app's API routes as served, each with the one declaration of who may call it."""

from __future__ import annotations

from typing import Any

from fastapi import routing
from fastapi.routing import APIRoute


def api_routes(app: Any) -> list[APIRoute]:
    """Every documented API route, including those of included routers (which this FastAPI
    keeps behind an include record instead of copying them into `app.routes`)."""
    flatten = getattr(routing, "_iter_included_route_candidates", None)
    routes = list(flatten(app.routes)) if flatten is not None else list(app.routes)
    return [route for route in routes if isinstance(route, APIRoute) and route.include_in_schema]
