"""`lethe audit verify`: recompute a tenant's hash-chained audit log."""

from __future__ import annotations

import typer

from app.cli.arguments import Tenant, tenant_id_or_exit

group = typer.Typer(help="check the audit log", no_args_is_help=True)


@group.command("verify")
def verify(tenant: Tenant) -> int:
    """What `GET /v1/audit/verify` answers; exit 0 when the chain holds, 1 when not."""
    from app.audit import service as audit
    from app.core import uow

    tenant_id = tenant_id_or_exit(tenant)
    with uow.unit_of_work(tenant_id) as session:
        result = audit.verify(session, tenant_id=tenant_id)
    if result.ok:
        print(f"OK: {result.events} events, head {result.head}", flush=True)
        return 0
    print(f"FAILED: {result.events} events, first bad seq {result.first_bad_seq}", flush=True)
    return 1
