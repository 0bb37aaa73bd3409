"""Domain errors and their single rendering as RFC 9457 problem+json."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.core import db

log = logging.getLogger(__name__)

PROBLEM_BASE = "https://lethe.dev/problems/"
PROBLEM_MEDIA_TYPE = "application/problem+json"


class LetheError(Exception):
    """A refusal with a stable problem type. Services raise these, never HTTPException."""

    status: int = 400
    slug: str = "bad-request"
    title: str = "Bad request"

    def __init__(
        self, detail: str | None = None, *, headers: dict[str, str] | None = None, **extra: Any
    ) -> None:
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.extra = extra
        self.headers = headers or {}

    def logged(self) -> str:
        """What the log says of a refusal the server is to blame for (5xx): written by
        Lethe, never request content."""
        return self.detail


class Unauthorized(LetheError):
    status, slug, title = 401, "unauthorized", "Missing or unknown credentials"

    def __init__(self, detail: str | None = None, **extra: Any) -> None:
        super().__init__(detail, headers={"WWW-Authenticate": "Bearer"}, **extra)


class Forbidden(LetheError):
    status, slug, title = 403, "forbidden", "This key's role may not do that"


class NotFound(LetheError):
    status, slug, title = 404, "not-found", "Not found"


class Conflict(LetheError):
    status, slug, title = 409, "conflict", "Conflict"


class InvalidRequest(LetheError):
    status, slug, title = 422, "validation-error", "The request is not valid"


class PayloadTooLarge(LetheError):
    status, slug, title = 413, "payload-too-large", "Request body too large"


class IdempotencyKeyReused(LetheError):
    status, slug, title = 422, "idempotency-key-reused", "Idempotency-Key used for another request"


class IdempotencyInProgress(LetheError):
    status, slug, title = 409, "idempotency-in-progress", "A request with this key is running"


class InvalidIdempotencyKey(LetheError):
    status, slug, title = 422, "invalid-idempotency-key", "Idempotency-Key is not valid"


def problem_body(
    status: int, slug: str, title: str, detail: str, **extra: Any
) -> dict[str, Any]:
    return {"type": PROBLEM_BASE + slug, "title": title, "status": status, "detail": detail,
            **extra}


def problem_response(
    status: int, slug: str, title: str, detail: str,
    headers: dict[str, str] | None = None, **extra: Any,
) -> JSONResponse:
    return JSONResponse(
        problem_body(status, slug, title, detail, **extra),
        status_code=status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def render(exc: LetheError) -> JSONResponse:
    return problem_response(
        exc.status, exc.slug, exc.title, exc.detail, headers=exc.headers, **exc.extra
    )


def problem_of(exc: LetheError) -> dict[str, Any]:
    """The problem body of a refusal, for an answer that carries several (a batch's items)."""
    return problem_body(exc.status, exc.slug, exc.title, exc.detail, **exc.extra)


def validation_problem(
    found: Sequence[Mapping[str, Any]], *, prefix: Sequence[str] = ()
) -> dict[str, Any]:
    """The 422 problem body of validation errors (pydantic's), locations under ``prefix``.

    Only location, message and type: echoing the input could copy memory text into logs.
    """
    errors = [
        {"loc": [*prefix, *(str(part) for part in err.get("loc", ()))],
         "msg": str(err.get("msg", "")), "type": str(err.get("type", ""))}
        for err in found
    ]
    detail = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors[:5]) or "Invalid"
    return problem_body(422, "validation-error", "The request is not valid", detail,
                        errors=errors)


_HTTP_SLUGS = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Missing or unknown credentials"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    406: ("not-acceptable", "Not acceptable"),
    413: ("payload-too-large", "Request body too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
}


async def _lethe_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, LetheError)
    if exc.status >= 500:
        log.error("refused: %s", exc.slug, extra={"fields": {"reason": exc.logged()}})
    return render(exc)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    slug, title = _HTTP_SLUGS.get(exc.status_code, ("http-error", "HTTP error"))
    detail = exc.detail if isinstance(exc.detail, str) else title
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        # Starlette names only the first matching route's methods; a path served by several
        # routes (GET and PATCH /v1/settings) must list them all.
        headers["Allow"] = ", ".join(_allowed_methods(request))
    return problem_response(exc.status_code, slug, title, detail, headers=headers)


def _allowed_methods(request: Request) -> list[str]:
    methods: set[str] = set()
    for route in request.app.routes:
        route_methods = getattr(route, "methods", None)
        if route_methods and route.matches({**request.scope, "method": "GET"})[0] != Match.NONE:
            methods |= set(route_methods)
    return sorted(methods)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problem = validation_problem(exc.errors())
    errors = problem["errors"]
    if any(e["loc"] == ["header", "Idempotency-Key"] and e["type"] == "missing" for e in errors):
        # docs/api.md: an operation that must be named by its key is a 400 without one.
        return problem_response(400, "idempotency-key-required",
                                "This request needs an Idempotency-Key",
                                "Send an Idempotency-Key: it names this operation.")
    if any(e["loc"] == ["header", "If-Match"] and e["type"] == "missing" for e in errors):
        # docs/api.md: an edit without the revision it replaces is a 428.
        return problem_response(428, "if-match-required", "If-Match is required",
                                'Send `If-Match: "<revision>"` with the ETag you last read.')
    return JSONResponse(problem, status_code=422, media_type=PROBLEM_MEDIA_TYPE)


# What a handler of database errors catches (SQLAlchemy's, and the raw driver's of recall's
# pipeline); `db.is_transient` tells which of them is an outage.
DATABASE_ERRORS = (sa_exc.DBAPIError, sa_exc.TimeoutError, psycopg.Error)

# How long a client is asked to wait after a 503: a restarting database or a failover
# usually answers again within seconds, and a shorter wait only adds load while it comes back.
UNAVAILABLE_RETRY_AFTER_SECONDS = 2


def unavailable_response() -> JSONResponse:
    """503: the database could not be reached or lost the connection mid-request. The
    request's transaction did not commit (or its outcome is unknown when the connection was
    lost at the commit), so a retry with the same Idempotency-Key is always safe."""
    return problem_response(
        503, "service-unavailable", "Service unavailable",
        "The database is unavailable; nothing was changed. Retry after the time given.",
        headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER_SECONDS)},
    )


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    if db.is_transient(exc):
        # The class name only: driver messages can quote parameters, and those can be text.
        log.warning("database unavailable: %s", type(exc).__name__)
        return unavailable_response()
    return await _unhandled(request, exc)


async def _unhandled(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    # The server raises on after this answer, and uvicorn then drops the connection: saying
    # so lets a keep-alive client open a new one instead of meeting a reset on its next request.
    return problem_response(
        500, "internal-error", "Internal error", "The server failed; nothing was changed.",
        headers={"Connection": "close"},
    )


def install(app: FastAPI) -> None:
    app.add_exception_handler(LetheError, _lethe_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    # Database errors (SQLAlchemy's, and the raw driver's of recall's pipeline): a lost or
    # refused connection is a 503 with Retry-After, anything else stays a 500.
    for database_error in DATABASE_ERRORS:
        app.add_exception_handler(database_error, _database_error)
    app.add_exception_handler(Exception, _unhandled)


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str
    title: str
    status: int
    detail: str


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the problems a route can answer, all as problem+json."""
    return {
        status: {
            "model": Problem,
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
            "description": _HTTP_SLUGS.get(status, ("", "Problem"))[1] or "Problem",
        }
        for status in statuses
    }


# Every API route can answer these; routes add their own specific ones.
COMMON_PROBLEMS = (400, 401, 403, 404, 409, 413, 422, 500, 503)
_HTTP_SLUGS.update({409: ("conflict", "Conflict"), 422: ("validation-error", "Invalid request"),
                    500: ("internal-error", "Internal error"),
                    503: ("service-unavailable", "Service unavailable")})
