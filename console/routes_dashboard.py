"""The dashboard: what an officer checks first."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from console.deps import ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)


@router.get("/", name="home", response_class=HTMLResponse)
def home(request: Request, viewer: ViewerDep) -> Response:
    """The signed-in member's start page."""
    return templates.TemplateResponse(request, "home.html", {"viewer": viewer})
