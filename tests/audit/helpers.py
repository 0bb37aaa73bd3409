from __future__ import annotations

import uuid
from typing import Any

from app.audit import service as audit
from app.core import uow

ACTOR = "key:" + str(uuid.UUID(int=1))


def append(tenant_id: str | uuid.UUID, count: int = 1, **fields: Any) -> list[dict[str, Any]]:
    """Record ``count`` events in one transaction; their seq and hash."""
    fields.setdefault("actor", ACTOR)
    fields.setdefault("action", "memory.transition")
    fields.setdefault("target_kind", "memory")
    written = []
    with uow.unit_of_work(uuid.UUID(str(tenant_id))) as session:
        for n in range(count):
            event = audit.record(session, tenant_id=uuid.UUID(str(tenant_id)),
                                 **{"reason": f"step {n}", **fields})
            written.append({"seq": event.seq, "hash": event.hash, "id": event.id})
    return written


def verify(tenant_id: str | uuid.UUID) -> Any:
    with uow.unit_of_work(uuid.UUID(str(tenant_id))) as session:
        return audit.verify(session, tenant_id=uuid.UUID(str(tenant_id)))


def tamper(owner_conn: Any, *statements: tuple[str, tuple[Any, ...]]) -> None:
    """Run ``statements`` as the owner with the append-only trigger stood down."""
    with owner_conn.transaction():
        owner_conn.execute("SET LOCAL lethe.audit_maintenance = 'on'")
        for statement, params in statements:
            owner_conn.execute(statement, params)
