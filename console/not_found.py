"""A console URL whose ID is malformed names nothing: the console's own 404 page, as for an
ID that names nothing of this tenant, never FastAPI's JSON 422."""

from __future__ import annotations

from fastapi import Request, status
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from console.templating import templates

# What the page says is missing, by the path parameter that failed.
WHAT = {"memory_id": "memory", "request_id": "erasure request", "hold_id": "legal hold",
        "staff_id": "staff member"}


async def malformed_path(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    failed = [error["loc"][1] for error in exc.errors()
              if len(error.get("loc", ())) > 1 and error["loc"][0] == "path"]
    if not failed:
        # A form or query the page did not parse itself: FastAPI's own answer.
        return await request_validation_exception_handler(request, exc)
    # Sign-in, CSRF and the officer check ran before the path was validated: a viewer is
    # known here, so the page keeps its menu.
    viewer = getattr(request.state, "console_viewer", None)
    return templates.TemplateResponse(
        request, "not_found.html", {"viewer": viewer, "what": WHAT.get(str(failed[0]), "page")},
        status_code=status.HTTP_404_NOT_FOUND)
