"""`lethe staff create|role`: a tenant's console staff from the command line."""

from __future__ import annotations

import sys
import uuid
from typing import Annotated

import typer

from app.cli.arguments import Tenant, tenant_id_or_exit

group = typer.Typer(help="manage a tenant's console staff", no_args_is_help=True)


@group.command("create")
def create(
    tenant: Annotated[str, typer.Option(help="the tenant's ID")],
    email: Annotated[str, typer.Option()],
    role: Annotated[str, typer.Option(help="officer or viewer")],
    password: Annotated[str | None, typer.Option(
        help="at least 12 characters (visible in the process list)")] = None,
) -> int:
    """Add a staff member; without --password one is generated and printed once."""
    return create_staff(tenant, email, role, password)


def create_staff(tenant: str, email: str, role: str, password: str | None) -> int:
    """`lethe staff create`: what `POST /v1/staff` does, for the installation's operator."""
    from pydantic import ValidationError

    from app.audit import service as audit
    from app.core import uow
    from app.core.errors import LetheError
    from app.staff import service as staff
    from app.staff.schemas import StaffCreate
    from app.tenants import service as tenants

    try:
        tenant_id = uuid.UUID(tenant)
        body = StaffCreate.model_validate({"email": email, "role": role, "password": password})
    except ValueError as error:
        problems = (error.errors() if isinstance(error, ValidationError)
                    else [{"loc": ("tenant",), "msg": "not a UUID"}])
        for problem in problems:
            where = ".".join(str(part) for part in problem["loc"])
            print(f"lethe: {where}: {problem['msg']}", file=sys.stderr)
        return 2
    prepared = staff.prepare_password(body.password)
    try:
        with uow.unit_of_work(tenant_id) as session:
            if not tenants.exists(session, tenant_id=tenant_id):
                print(f"lethe: no tenant {tenant_id}", file=sys.stderr)
                return 1
            member = staff.create(session, tenant_id=tenant_id, email=body.email,
                                  role=body.role, prepared=prepared, actor=audit.ADMIN)
    except LetheError as error:
        print(f"lethe: {error.detail}", file=sys.stderr)
        return 1
    print(f"lethe: staff member {member.id} ({member.email}, {member.role.value}) created",
          flush=True)
    if prepared.generated is not None:
        print(f"lethe: password (shown once): {prepared.generated}", flush=True)
    return 0




@group.command("role")
def set_role(
    tenant: Tenant,
    member: Annotated[str, typer.Option(help="the member's ID or email")],
    role: Annotated[str, typer.Option(help="officer or viewer")],
) -> int:
    """Make a member an officer or a viewer; their console sessions end."""
    return change_role(tenant, member, role)


def change_role(tenant: str, member: str, role: str) -> int:
    """`lethe staff role`: what `PATCH /v1/staff/{id}` does, for the installation's operator
    (who may have to give a tenant an officer again, and knows them by email)."""
    from pydantic import ValidationError

    from app.audit import service as audit
    from app.core import uow
    from app.core.errors import LetheError
    from app.staff import service as staff
    from app.staff.schemas import StaffRoleChange

    try:
        body = StaffRoleChange.model_validate({"role": role})
    except ValidationError:
        print("lethe: role: choose officer or viewer", file=sys.stderr)
        return 2
    tenant_id = tenant_id_or_exit(tenant)
    try:
        with uow.unit_of_work(tenant_id) as session:
            staff_id = staff.member_id(session, tenant_id=tenant_id, id_or_email=member)
            changed = staff.change_role(session, tenant_id=tenant_id, staff_id=staff_id,
                                        role=body.role, actor=audit.ADMIN)
    except LetheError as error:
        print(f"lethe: {error.detail}", file=sys.stderr)
        return 1
    print(f"lethe: staff member {changed.id} ({changed.email}) is {changed.role.value}; "
          "their console sessions ended", flush=True)
    return 0
