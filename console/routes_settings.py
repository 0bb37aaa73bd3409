"""The settings page: half-lives, working memory, retention, erasure, forget cascade and
session length."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, Response

from app.core import uow
from app.tenant_settings import service as tenant_settings
from app.tenant_settings.schemas import SettingsPatch, SettingsPublic
from console import forms
from console.auth import Viewer
from console.deps import CsrfDep, OfficerDep, ViewerDep
from console.routes_auth import redirect
from console.templating import templates

router = APIRouter(include_in_schema=False)

NUMBERS: dict[str, tuple[str, str]] = {
    # field: (label, hint)
    "half_lives.structural": ("Structural", "Days; facts about who someone is."),
    "half_lives.preferential": ("Preferential", "Days; likes and dislikes."),
    "half_lives.procedural": ("Procedural", "Days; how someone does things."),
    "half_lives.situational": ("Situational", "Days; what is going on right now."),
    "half_lives.working_seconds": ("Working memory half-life",
                                   "Seconds; an agent's scratch within one run."),
    "working.max_half_lives": ("Working memory kept for",
                               "Half-lives; recall stops returning a working memory after."),
    "retention.deprecated_days": ("Deprecated memories", "Days before they are quarantined."),
    "retention.quarantine_days": ("Quarantined memories", "Days before they are deleted."),
    "erasure.due_days": ("Erasure due after", "Days from filing to the due date (GDPR: 30)."),
    "console.session_minutes": ("Console idle timeout",
                                "Minutes of inactivity before a session ends (1 to 1440)."),
}
GROUPS = [
    ("Half-lives", "How fast memories of each kind fade.",
     [name for name in NUMBERS
      if name.startswith("half_lives.") and name != "half_lives.working_seconds"]),
    ("Working memory", "An agent's memories of one run (session), faded in seconds.",
     ["half_lives.working_seconds", "working.max_half_lives"]),
    ("Retention", "How long memories wait in each state.",
     ["retention.deprecated_days", "retention.quarantine_days"]),
]
CASCADES = {
    "flag": "Flag derived memories as suspect",
    "forget": "Forget derived memories too",
}
NOT_A_NUMBER = "Enter a number, such as 30 or 7.5."


def _current_values(current: SettingsPublic) -> dict[str, str]:
    dumped = current.model_dump()
    values = {name: _number(dumped[name.split(".")[0]][name.split(".")[1]])
              for name in NUMBERS}
    values["erasure.require_approval"] = "on" if current.erasure.require_approval else ""
    values["forget.cascade"] = current.forget.cascade
    return values


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _render(request: Request, viewer: Viewer, values: dict[str, str], *,
            errors: dict[str, str] | None = None, saved: bool = False,
            status_code: int = 200) -> Response:
    return templates.TemplateResponse(request, "settings.html", {
        "viewer": viewer, "values": values, "errors": errors or {}, "saved": saved,
        "numbers": NUMBERS, "groups": GROUPS, "cascades": CASCADES,
    }, status_code=status_code)


@router.get("/settings", name="settings_page", response_class=HTMLResponse)
def settings_page(request: Request, viewer: ViewerDep) -> Response:
    """The tenant's settings; officers change them."""
    with uow.unit_of_work(viewer.tenant_id) as session:
        current = tenant_settings.get(session, tenant_id=viewer.tenant_id)
    return _render(request, viewer, _current_values(current),
                   saved=request.query_params.get("saved") == "1")


@router.post("/settings", name="settings_save", dependencies=[CsrfDep])
async def settings_save(request: Request, officer: OfficerDep) -> Response:
    """Save the whole form as one patch, through the same service the API's PATCH uses."""
    form = await request.form()
    values = {name: str(form.get(name, "")).strip()[:40] for name in NUMBERS}
    values["erasure.require_approval"] = "on" if form.get("erasure.require_approval") else ""
    values["forget.cascade"] = str(form.get("forget.cascade", ""))[:20]
    patch: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    for name in NUMBERS:
        group, field = name.split(".")
        try:
            patch.setdefault(group, {})[field] = float(values[name])
        except ValueError:
            errors[name] = NOT_A_NUMBER
    patch.setdefault("erasure", {})["require_approval"] = bool(values["erasure.require_approval"])
    patch["forget"] = {"cascade": values["forget.cascade"]}
    body, invalid = forms.parse(SettingsPatch, patch)
    errors = {**invalid, **errors}
    if body is None or errors:
        return _render(request, officer, values, errors=errors,
                       status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            tenant_settings.update(session, tenant_id=officer.tenant_id, patch=body,
                                   actor=officer.actor)
    except tenant_settings.SettingsConflict as exc:
        return _render(request, officer, values, errors={"form": exc.detail},
                       status_code=status.HTTP_409_CONFLICT)
    response = redirect(request, "settings_page")
    response.headers["location"] += "?saved=1"
    return response
