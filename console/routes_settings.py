"""The settings page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from console.deps import ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)


@router.get("/settings", name="settings_page", response_class=HTMLResponse)
def settings_page(request: Request, viewer: ViewerDep) -> Response:
    return templates.TemplateResponse(request, "settings.html", {"viewer": viewer})
