"""The staff page: who may sign in; officers add and remove members, change their role and
unlock an account locked by failed sign-ins."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, Response

from app.core import uow
from app.staff import service as staff_service
from app.staff import sign_in
from app.staff.errors import LastOfficer, LockShared, StaffEmailTaken, StaffNotFound
from app.staff.models import StaffRole
from app.staff.schemas import StaffCreate
from console import forms
from console.auth import Viewer
from console.deps import CsrfDep, OfficerDep, ViewerDep
from console.routes_auth import redirect
from console.templating import templates

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 200
NOTICES = {
    "removed": "The member was removed and can no longer sign in.",
    "role": "The role was changed; the member signs in again to use it.",
    "unlocked": "The account was unlocked: the member can sign in again.",
    "not-locked": "That account was not locked.",
}


def _render(request: Request, viewer: Viewer, *, status_code: int = 200,
            errors: dict[str, str] | None = None, values: dict[str, str] | None = None,
            created: dict[str, str] | None = None, notice: str | None = None) -> Response:
    with uow.unit_of_work(viewer.tenant_id) as session:
        members = staff_service.members(session, tenant_id=viewer.tenant_id, limit=PAGE_SIZE)
        locked = sign_in.locked(session, members=members.data)
    return templates.TemplateResponse(request, "staff.html", {
        "viewer": viewer, "members": members.data, "more": members.next_cursor is not None,
        "locked": locked,
        "roles": list(StaffRole), "errors": errors or {},
        "values": values or {"email": "", "role": StaffRole.viewer.value},
        "created": created, "notice": notice,
    }, status_code=status_code)


@router.get("/staff", name="staff_page", response_class=HTMLResponse)
def staff_page(request: Request, viewer: ViewerDep) -> Response:
    """Active members, oldest first."""
    return _render(request, viewer, notice=NOTICES.get(request.query_params.get("done", "")))


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
        return _render(request, officer, errors={"member": "You cannot remove yourself."},
                       status_code=status.HTTP_409_CONFLICT)
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            staff_service.remove(session, tenant_id=officer.tenant_id, staff_id=staff_id,
                                 actor=officer.actor)
    except StaffNotFound:
        return _render(request, officer, errors={"member": "No such member."},
                       status_code=status.HTTP_404_NOT_FOUND)
    except LastOfficer as exc:
        return _render(request, officer, errors={"member": exc.detail},
                       status_code=status.HTTP_409_CONFLICT)
    return _done(request, "removed")


@router.post("/staff/{staff_id}/role", name="staff_role", dependencies=[CsrfDep])
def staff_role(request: Request, staff_id: uuid.UUID, officer: OfficerDep,
               role: Annotated[str, Form(max_length=20)] = "") -> Response:
    """Make a member an officer or a viewer; their sessions end (audited)."""
    if staff_id == officer.staff_id:
        return _render(request, officer, errors={"member": "You cannot change your own role."},
                       status_code=status.HTTP_409_CONFLICT)
    if role not in set(StaffRole):
        return _render(request, officer, errors={"member": "Choose officer or viewer."},
                       status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            staff_service.change_role(session, tenant_id=officer.tenant_id, staff_id=staff_id,
                                      role=StaffRole(role), actor=officer.actor)
    except StaffNotFound:
        return _render(request, officer, errors={"member": "No such member."},
                       status_code=status.HTTP_404_NOT_FOUND)
    except LastOfficer as exc:
        return _render(request, officer, errors={"member": exc.detail},
                       status_code=status.HTTP_409_CONFLICT)
    return _done(request, "role")


@router.post("/staff/{staff_id}/unlock", name="staff_unlock", dependencies=[CsrfDep])
def staff_unlock(request: Request, staff_id: uuid.UUID, officer: OfficerDep) -> Response:
    """Lift the lock that failed sign-ins put on a member's account (audited)."""
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            lifted = sign_in.unlock(session, tenant_id=officer.tenant_id, staff_id=staff_id,
                                    actor=officer.actor)
    except StaffNotFound:
        return _render(request, officer, errors={"member": "No such member."},
                       status_code=status.HTTP_404_NOT_FOUND)
    except LockShared as refused:
        return _render(request, officer, status_code=status.HTTP_409_CONFLICT, errors={
            "member": "This email signs in elsewhere too, so only time lifts its lock. "
                      f"{refused.detail}"})
    return _done(request, "unlocked" if lifted else "not-locked")


def _done(request: Request, what: str) -> Response:
    # Post/redirect/get: a reload shows the page again instead of repeating the change.
    response = redirect(request, "staff_page")
    response.headers["location"] += f"?done={what}"
    return response
