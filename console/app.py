"""The compliance console: a server-rendered sub-app mounted at /console by app/main.py."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from app.core import db
from app.core.errors import DATABASE_ERRORS, UNAVAILABLE_RETRY_AFTER_SECONDS
from app.keys.errors import RETRY_AFTER_SECONDS as KEY_STORE_RETRY_AFTER_SECONDS
from app.keys.errors import KeyStoreUnavailable, Tampered
from console import (
    routes_audit,
    routes_auth,
    routes_dashboard,
    routes_erasures,
    routes_holds,
    routes_memories,
    routes_quarantine,
    routes_settings,
    routes_staff,
)
from console.cookies import PendingCookiesMiddleware
from console.deps import CrossSiteForm, CsrfRefused, NotAnOfficer, NotSignedIn
from console.headers import SecurityHeadersMiddleware
from console.not_found import malformed_path
from console.templating import STATIC_DIR, templates

log = logging.getLogger(__name__)

REFUSALS: dict[type[Exception], str] = {
    CrossSiteForm: "Forms from other sites are not accepted.",
    CsrfRefused: "This form has expired or did not come from this console. "
                 "Go back, reload the page and try again.",
    NotAnOfficer: "Your account can read the console but not change anything. "
                  "Ask an officer to do this.",
}


def create_console() -> FastAPI:
    # The console is HTML for people, not an API: it stays out of every OpenAPI document.
    console = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, title="Lethe console")
    console.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    console.include_router(routes_auth.router)
    console.include_router(routes_dashboard.router)
    console.include_router(routes_memories.router)
    console.include_router(routes_quarantine.router)
    console.include_router(routes_holds.router)
    console.include_router(routes_erasures.router)
    console.include_router(routes_audit.router)
    console.include_router(routes_staff.router)
    console.include_router(routes_settings.router)
    console.add_exception_handler(NotSignedIn, _not_signed_in)
    console.add_exception_handler(RequestValidationError, malformed_path)
    for refusal in REFUSALS:
        console.add_exception_handler(refusal, _refused)
    for database_error in DATABASE_ERRORS:
        console.add_exception_handler(database_error, _database_error)
    console.add_exception_handler(KeyStoreUnavailable, _key_store_unavailable)
    console.add_exception_handler(Tampered, _tampered)
    # Outermost last: the headers go on every response, cookies included.
    console.add_middleware(PendingCookiesMiddleware)
    console.add_middleware(SecurityHeadersMiddleware)
    return console


async def _not_signed_in(request: Request, exc: Exception) -> Response:
    return routes_auth.redirect_to_login(request)


async def _refused(request: Request, exc: Exception) -> Response:
    # The member, when the refusal came after sign-in was checked: the page keeps its menu.
    viewer = getattr(request.state, "console_viewer", None)
    return templates.TemplateResponse(
        request, "refused.html", {"message": REFUSALS[type(exc)], "viewer": viewer},
        status_code=status.HTTP_403_FORBIDDEN,
    )


async def _database_error(request: Request, exc: Exception) -> Response:
    """A page for people where the API answers problem+json: 503 with Retry-After while the
    database is unreachable (the form can be sent again as it is), 500 otherwise."""
    if db.is_transient(exc):
        # The class name only: driver messages can quote parameters, and those can be text.
        log.warning("console: database unavailable: %s", type(exc).__name__)
        return _unavailable(request, "The database cannot be reached just now",
                            UNAVAILABLE_RETRY_AFTER_SECONDS)
    viewer = getattr(request.state, "console_viewer", None)
    log.error("console: database error: %s", type(exc).__name__)
    return templates.TemplateResponse(
        request, "unavailable.html",
        {"heading": "Something failed", "viewer": viewer,
         "message": "The console failed on its side; nothing was changed."},
        status_code=status.HTTP_500_INTERNAL_SERVER_ERROR)


async def _key_store_unavailable(request: Request, exc: Exception) -> Response:
    """503 with Retry-After: without the key store nothing is read, and nothing is written
    in clear instead (the request's transaction rolled back)."""
    return _unavailable(request, "The key store cannot be read just now",
                        KEY_STORE_RETRY_AFTER_SECONDS)


async def _tampered(request: Request, exc: Exception) -> Response:
    """500, as the API answers `sealed-value-rejected`: a stored value failed its integrity
    check. Logged by where it is (IDs), never by what it holds."""
    assert isinstance(exc, Tampered)
    log.error("console: refused: %s", exc.slug, extra={"fields": {"reason": exc.logged()}})
    viewer = getattr(request.state, "console_viewer", None)
    return templates.TemplateResponse(
        request, "unavailable.html",
        {"heading": "A stored value was rejected", "viewer": viewer,
         "message": "A stored value failed its integrity check and was not shown; nothing "
                    "was changed. The operator has been told."},
        status_code=status.HTTP_500_INTERNAL_SERVER_ERROR)


def _unavailable(request: Request, reason: str, retry_after: int) -> Response:
    viewer = getattr(request.state, "console_viewer", None)
    return templates.TemplateResponse(
        request, "unavailable.html",
        {"heading": "Temporarily unavailable", "viewer": viewer,
         "message": f"{reason}; nothing was changed. Try again in a moment."},
        status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(retry_after)})
