"""Options that several commands share, and their checks."""

from __future__ import annotations

import sys
import uuid
from typing import Annotated

import typer

Tenant = Annotated[str, typer.Option(help="the tenant's ID")]


def tenant_id_or_exit(tenant: str) -> uuid.UUID:
    """The tenant's ID; exit 2 (a usage error) when it is not a UUID, 1 when no such tenant."""
    from app.core import uow
    from app.tenants import service as tenants

    try:
        tenant_id = uuid.UUID(tenant)
    except ValueError:
        print("lethe: tenant: not a UUID", file=sys.stderr)
        raise typer.Exit(2) from None
    with uow.unit_of_work(tenant_id) as session:
        if not tenants.exists(session, tenant_id=tenant_id):
            print(f"lethe: no tenant {tenant_id}", file=sys.stderr)
            raise typer.Exit(1)
    return tenant_id
