"""The compliance console: a server-rendered sub-app mounted at /console by app/main.py."""

from __future__ import annotations

from fastapi import FastAPI, Request, status
from fastapi.responses import PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles

from console import (
    routes_auth,
    routes_erasures,
    routes_holds,
    routes_memories,
    routes_quarantine,
)
from console.deps import CrossSiteForm, NotSignedIn
from console.headers import SecurityHeadersMiddleware
from console.templating import STATIC_DIR


def create_console() -> FastAPI:
    # The console is HTML for people, not an API: it stays out of every OpenAPI document.
    console = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, title="Lethe console")
    console.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    console.include_router(routes_auth.router)
    console.include_router(routes_memories.router)
    console.include_router(routes_quarantine.router)
    console.include_router(routes_holds.router)
    console.include_router(routes_erasures.router)
    console.add_exception_handler(NotSignedIn, _not_signed_in)
    console.add_exception_handler(CrossSiteForm, _cross_site_form)
    console.add_middleware(SecurityHeadersMiddleware)
    return console


async def _not_signed_in(request: Request, exc: Exception) -> Response:
    return routes_auth.redirect_to_login(request)


async def _cross_site_form(request: Request, exc: Exception) -> Response:
    return PlainTextResponse(
        "Forms from other sites are not accepted.", status_code=status.HTTP_403_FORBIDDEN
    )
