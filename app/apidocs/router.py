"""`/docs` and `/redoc` with Swagger UI and ReDoc served from the installed package.

FastAPI's own pages load their scripts from a CDN, so an air-gapped installation showed a
blank page. The assets come from the pinned `fastapi-offline` distribution (its files only:
the pages are ours) and are mounted at `ASSETS`, so every URL a page names is same-origin.
ReDoc's bundle is served at `REDOC_JS` with the one address it would still load replaced, and
Swagger UI is told not to show its validator badge (an image from validator.swagger.io).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
OAUTH2_REDIRECT = "/docs/oauth2-redirect"
ASSET_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"
REDOC_JS = "/docs/redoc.standalone.js"
# The sidebar's "API docs by Redocly" logo, which ReDoc loads from its CDN with no option to
# leave it out; an empty inline image of the same size takes its place.
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
BLANK_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 1 1'/%3E"

router = APIRouter(include_in_schema=False)


def assets() -> StaticFiles:
    """The Swagger UI and ReDoc files, to mount at `ASSETS`."""
    return StaticFiles(directory=ASSET_DIR)


@router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI over this app's OpenAPI document."""
    root = request.scope.get("root_path", "")
    return get_swagger_ui_html(
        openapi_url=f"{root}{request.app.openapi_url}",
        title=f"{request.app.title} - Swagger UI",
        oauth2_redirect_url=f"{root}{OAUTH2_REDIRECT}",
        swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
        swagger_ui_parameters={"validatorUrl": None},
    )


@router.get(OAUTH2_REDIRECT)
def swagger_ui_redirect() -> HTMLResponse:
    """Swagger UI's OAuth2 redirect page."""
    return get_swagger_ui_oauth2_redirect_html()


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    """ReDoc over this app's OpenAPI document."""
    root = request.scope.get("root_path", "")
    return get_redoc_html(
        openapi_url=f"{root}{request.app.openapi_url}",
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{root}{REDOC_JS}",
        redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
        # ReDoc fetches Google Fonts unless told not to.
        with_google_fonts=False,
    )


@router.get(REDOC_JS)
def redoc_script() -> Response:
    """ReDoc's bundle, loading nothing from another host."""
    return Response(redoc_bundle(), media_type="text/javascript; charset=utf-8",
                    headers={"Cache-Control": "public, max-age=86400"})


@cache
def redoc_bundle() -> bytes:
    """The installed bundle with its logo's address replaced (tests/apidocs checks that a new
    ReDoc names no other host)."""
    bundle = (ASSET_DIR / "redoc.standalone.js").read_text(encoding="utf-8")
    return bundle.replace(REDOC_LOGO, BLANK_IMAGE).encode("utf-8")
