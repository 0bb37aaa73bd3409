from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from app.api import route
from app.api.deps import ComplianceReader, ComplianceWriter, SessionDep, not_replayed
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.staff import service
from app.staff.schemas import StaffCreate, StaffCreated, StaffList, StaffPublic, StaffRoleChange

router = APIRouter(
    prefix="/v1/staff", tags=["staff"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


# The caller first (a 403 costs no hashing), then Argon2, before the transaction opens.
def _prepared_password(body: StaffCreate, _: ComplianceWriter) -> service.PreparedPassword:
    return service.prepare_password(body.password)


PreparedPassword = Annotated[service.PreparedPassword, Depends(_prepared_password)]


# A generated password is shown once: a replay answers it as null.
@router.post("", status_code=status.HTTP_201_CREATED,
             dependencies=[Depends(not_replayed("password"))])
def create_staff(body: StaffCreate, principal: ComplianceWriter, prepared: PreparedPassword,
                 session: SessionDep) -> StaffCreated:
    """Add a console staff member; a generated password is shown once (compliance key)."""
    staff = service.create(session, tenant_id=principal.tenant_id, email=body.email,
                           role=body.role, prepared=prepared, actor=audit.actor_for(principal))
    return StaffCreated(id=staff.id, email=staff.email, role=staff.role,
                        created_at=staff.created_at, password=prepared.generated)


@router.get("")
def list_staff(
    principal: ComplianceReader,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> StaffList:
    """List active console staff, oldest first (compliance key)."""
    return service.members(session, tenant_id=principal.tenant_id, limit=limit, cursor=cursor)


@router.patch("/{staff_id}")
def change_staff_role(staff_id: uuid.UUID, body: StaffRoleChange, principal: ComplianceWriter,
                      session: SessionDep) -> StaffPublic:
    """Change a staff member's role, ending their console sessions (compliance key)."""
    staff = service.change_role(session, tenant_id=principal.tenant_id, staff_id=staff_id,
                                role=body.role, actor=audit.actor_for(principal))
    return StaffPublic.model_validate(staff)


@router.delete("/{staff_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_staff(staff_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep
                 ) -> Response:
    """Remove a staff member: they can no longer sign in (compliance key)."""
    service.remove(session, tenant_id=principal.tenant_id, staff_id=staff_id,
                   actor=audit.actor_for(principal))
    return Response(status_code=status.HTTP_204_NO_CONTENT)
