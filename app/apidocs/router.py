"""`/docs` and `/redoc` with Swagger UI and ReDoc served from the installed package.

FastAPI's own pages load their scripts from a CDN, so an air-gapped installation showed a
blank page. The assets come from the pinned `fastapi-offline` distribution (its files only:
the pages are ours) and are mounted at `ASSETS`, so every URL a page names is same-origin.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
OAUTH2_REDIRECT = "/docs/oauth2-redirect"
ASSET_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"

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
        redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
        redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
        # ReDoc fetches Google Fonts unless told not to.
        with_google_fonts=False,
    )
