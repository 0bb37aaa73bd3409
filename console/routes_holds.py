"""Legal holds: place one, see the active and released ones and what each holds, release."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Form, Query, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from app.core import uow
from app.core.errors import LetheError
from app.holds import service as holds
from app.holds.errors import HoldNotFound
from app.holds.schemas import (
    HoldCreate,
    LegalHoldDetail,
    MemoryIdsHoldCreate,
    SourceHoldCreate,
    SubjectHoldCreate,
)
from console import actors, auth
from console.deps import CsrfDep, OfficerDep, ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 25
RELEASE_REASON_MAX = 500
Scope = Literal["subject", "memory_ids", "source"]
Cursor = Annotated[str, Query(max_length=100)]


def _page(tenant_id: uuid.UUID, *, active: bool, cursor: str | None
          ) -> tuple[list[LegalHoldDetail], str | None, dict[str, str]]:
    with uow.unit_of_work(tenant_id) as session:
        found = holds.holds(session, tenant_id=tenant_id, active=active, limit=PAGE_SIZE,
                            cursor=cursor)
        # held_count is the service's detail read: the one rule of what a hold covers. A
        # released hold covers nothing, so only active ones are counted.
        detailed = [holds.get(session, tenant_id=tenant_id, hold_id=hold.id) if active
                    else LegalHoldDetail(**hold.model_dump(), held_count=0)
                    for hold in found.data]
        names = actors.resolve(session, tenant_id=tenant_id, actors=[
            actor for hold in found.data for actor in (hold.created_by, hold.released_by)])
    return detailed, found.next_cursor, names


def _render(request: Request, viewer: auth.Viewer, *, active_cursor: str | None = None,
            released_cursor: str | None = None, errors: dict[str, str] | None = None,
            form: dict[str, str] | None = None, code: int = status.HTTP_200_OK) -> Response:
    active, next_active, placers = _page(viewer.tenant_id, active=True, cursor=active_cursor)
    released, next_released, releasers = _page(viewer.tenant_id, active=False,
                                               cursor=released_cursor)
    return templates.TemplateResponse(request, "holds.html", {
        "viewer": viewer, "active": active, "released": released, "next_active": next_active,
        "next_released": next_released, "errors": errors or {},
        "form": form or {"scope": "subject"}, actors.CONTEXT_KEY: placers | releasers,
    }, status_code=code)


@router.get("/holds", name="console_holds", response_class=HTMLResponse)
def list_holds(request: Request, viewer: ViewerDep, active_cursor: Cursor = "",
               released_cursor: Cursor = "") -> Response:
    """Active and released legal holds, with what each holds."""
    return _render(request, viewer, active_cursor=active_cursor or None,
                   released_cursor=released_cursor or None)


@router.post("/holds", name="console_place_hold", response_class=HTMLResponse,
             dependencies=[CsrfDep])
def place(
    request: Request, officer: OfficerDep, scope: Annotated[Scope, Form()],
    target: Annotated[str, Form(max_length=60_000)] = "",
    reason: Annotated[str, Form(max_length=2000)] = "",
    case_ref: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    """Place a legal hold on a subject, memory IDs or a source (audited)."""
    form = {"scope": scope, "target": target, "reason": reason, "case_ref": case_ref}
    errors: dict[str, str] = {}
    fields: dict[str, object] = {"reason": reason.strip(), "case_ref": case_ref.strip() or None}
    body: HoldCreate | None = None
    try:
        # The API's own models validate: one rule for what a hold may name.
        if scope == "subject":
            body = SubjectHoldCreate.model_validate({**fields, "subject": target.strip()})
        elif scope == "source":
            body = SourceHoldCreate.model_validate({**fields, "source": target.strip()})
        else:
            body = MemoryIdsHoldCreate.model_validate(
                {**fields, "memory_ids": target.replace(",", " ").split()})
    except ValidationError as invalid:
        for problem in invalid.errors():
            field = str(problem["loc"][0]) if problem["loc"] else "target"
            name = field if field in ("reason", "case_ref") else "target"
            errors.setdefault(name, _message(name, problem["msg"]))
    if body is not None and not errors:
        try:
            with uow.unit_of_work(officer.tenant_id) as session:
                holds.place(session, tenant_id=officer.tenant_id, body=body,
                            actor=officer.actor)
        except LetheError as refused:
            errors["target"] = refused.detail
    if errors:
        return _render(request, officer, errors=errors, form=form,
                       code=status.HTTP_422_UNPROCESSABLE_CONTENT)
    return RedirectResponse(request.url_for("console_holds").path,
                            status_code=status.HTTP_303_SEE_OTHER)


def _message(field: str, detail: str) -> str:
    if field == "reason":
        return "Give a reason (up to 500 characters)."
    if field == "case_ref":
        return "A case reference is at most 200 characters."
    return f"Name what to hold: {detail[0].lower()}{detail[1:]}."


def _hold_not_found(request: Request, viewer: auth.Viewer) -> Response:
    return templates.TemplateResponse(request, "not_found.html",
                                      {"viewer": viewer, "what": "legal hold"},
                                      status_code=status.HTTP_404_NOT_FOUND)


def _confirm(request: Request, viewer: auth.Viewer, hold_id: uuid.UUID, *,
             reason: str = "", error: str | None = None,
             code: int = status.HTTP_200_OK) -> Response:
    try:
        with uow.unit_of_work(viewer.tenant_id) as session:
            hold = holds.get(session, tenant_id=viewer.tenant_id, hold_id=hold_id)
            names = actors.resolve(session, tenant_id=viewer.tenant_id,
                                   actors=[hold.created_by, hold.released_by])
    except HoldNotFound:
        return _hold_not_found(request, viewer)
    return templates.TemplateResponse(request, "hold_release.html", {
        "viewer": viewer, "hold": hold, "reason": reason, "error": error,
        actors.CONTEXT_KEY: names}, status_code=code)


@router.get("/holds/{hold_id}/release", name="console_confirm_release", response_class=HTMLResponse)
def confirm_release(request: Request, hold_id: uuid.UUID, viewer: ViewerDep) -> Response:
    """Ask before releasing a hold, showing what it holds, and why it is released."""
    return _confirm(request, viewer, hold_id)


@router.post("/holds/{hold_id}/release", name="console_release_hold", dependencies=[CsrfDep])
def release(request: Request, hold_id: uuid.UUID, officer: OfficerDep,
            reason: Annotated[str, Form(max_length=2000)] = "") -> Response:
    """Release a legal hold with a reason (audited); the record stays."""
    why = reason.strip()
    if not why or len(why) > RELEASE_REASON_MAX:
        # The API leaves the reason optional; an officer releasing by hand always gives one.
        return _confirm(request, officer, hold_id, reason=reason,
                        error=f"Give a reason (up to {RELEASE_REASON_MAX} characters): "
                              "it goes into the audit log.",
                        code=status.HTTP_422_UNPROCESSABLE_CONTENT)
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            holds.release(session, tenant_id=officer.tenant_id, hold_id=hold_id,
                          actor=officer.actor, reason=why)
    except HoldNotFound:
        return _hold_not_found(request, officer)
    return RedirectResponse(request.url_for("console_holds").path,
                            status_code=status.HTTP_303_SEE_OTHER)
