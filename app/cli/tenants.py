"""`lethe tenants create|list`: tenants from the command line, for the operator."""

from __future__ import annotations

import json
from typing import Annotated

import typer

group = typer.Typer(help="create and list tenants", no_args_is_help=True)


@group.command("create")
def create(name: Annotated[str, typer.Option(help="the tenant's name")]) -> int:
    """What `POST /v1/tenants` does: the tenant and one key per role, shown once."""
    from app.core import uow
    from app.tenants import service
    from app.tenants.models import Role

    with uow.unit_of_work() as session:
        created = service.create_tenant(session, name=name)
        tenant_id = created.tenant.id
    assert created.keys is not None
    print(f"lethe: tenant {tenant_id} ({name}) created", flush=True)
    for role in Role:
        print(f"lethe: {role.value} key (shown once): {created.keys[role]}", flush=True)
    return 0


@group.command("list")
def list_tenants(
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
) -> int:
    """Every tenant: ID, created, name."""
    from app.tenants import service

    for tenant in service.all_tenants():
        if as_json:
            print(json.dumps({"id": str(tenant.id), "name": tenant.name,
                              "created_at": tenant.created_at.isoformat()}))
        else:
            print(f"{tenant.id}  {tenant.created_at:%Y-%m-%d %H:%M}  {tenant.name}")
    return 0
