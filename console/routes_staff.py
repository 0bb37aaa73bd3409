"""The staff page: who may sign in; officers add and remove members."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, Response

from app.core import uow
from app.staff import service as staff_service
from app.staff.errors import StaffEmailTaken, StaffNotFound
from app.staff.models import StaffRole
from app.staff.schemas import StaffCreate
from console import forms
from console.auth import Viewer
from console.deps import CsrfDep, OfficerDep, ViewerDep
from console.routes_auth import redirect
from console.templating import templates

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 200


def _render(request: Request, viewer: Viewer, *, status_code: int = 200,
            errors: dict[str, str] | None = None, values: dict[str, str] | None = None,
            created: dict[str, str] | None = None, notice: str | None = None) -> Response:
    with uow.unit_of_work(viewer.tenant_id) as session:
        members = staff_service.members(session, tenant_id=viewer.tenant_id, limit=PAGE_SIZE)
    return templates.TemplateResponse(request, "staff.html", {
        "viewer": viewer, "members": members.data, "more": members.next_cursor is not None,
        "roles": list(StaffRole), "errors": errors or {},
        "values": values or {"email": "", "role": StaffRole.viewer.value},
        "created": created, "notice": notice,
    }, status_code=status_code)


@router.get("/staff", name="staff_page", response_class=HTMLResponse)
def staff_page(request: Request, viewer: ViewerDep) -> Response:
    """Active members, oldest first."""
    notice = {"removed": "The member was removed and can no longer sign in."}.get(
        request.query_params.get("done", ""))
    return _render(request, viewer, notice=notice)


@router.post("/staff", name="staff_add", dependencies=[CsrfDep])
def staff_add(
    request: Request, officer: OfficerDep,
    email: Annotated[str, Form(max_length=1000)] = "",
    role: Annotated[str, Form(max_length=20)] = "",
    password: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    """Add a member; with no password a strong one is generated and shown once."""
    values = {"email": email.strip(), "role": role}
    body, errors = forms.parse(StaffCreate, {"email": values["email"], "role": role,
                                             "password": password or None})
    if body is None:
        return _render(request, officer, errors=errors, values=values,
                       status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)
    prepared = staff_service.prepare_password(body.password)
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            member = staff_service.create(session, tenant_id=officer.tenant_id,
                                          email=body.email, role=body.role,
                                          prepared=prepared, actor=officer.actor)
    except StaffEmailTaken as exc:
        return _render(request, officer, errors={"email": exc.detail}, values=values,
                       status_code=status.HTTP_409_CONFLICT)
    created = {"email": member.email, "role": member.role.value,
               "password": prepared.generated or ""}
    # Rendered, not redirected: a generated password exists only in this answer.
    return _render(request, officer, created=created, status_code=status.HTTP_201_CREATED)


@router.post("/staff/{staff_id}/remove", name="staff_remove", dependencies=[CsrfDep])
def staff_remove(request: Request, staff_id: uuid.UUID, officer: OfficerDep) -> Response:
    """Remove a member (their row stays, so the audit trail keeps naming them)."""
    if staff_id == officer.staff_id:
        return _render(request, officer, errors={"remove": "You cannot remove yourself."},
                       status_code=status.HTTP_409_CONFLICT)
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            staff_service.remove(session, tenant_id=officer.tenant_id, staff_id=staff_id,
                                 actor=officer.actor)
    except StaffNotFound:
        return _render(request, officer, errors={"remove": "No such member."},
                       status_code=status.HTTP_404_NOT_FOUND)
    response = redirect(request, "staff_page")
    response.headers["location"] += "?done=removed"
    return response
