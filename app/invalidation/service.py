"""Dependency values and the invalidation they trigger.

Changing a value queues one job; the job reads the value current *when it runs*, so jobs for
quick successive changes, redeliveries and overlapping runs all converge on the same end state.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlmodel import Session, col, select

from app.audit import service as audit
from app.core.models import utcnow
from app.idempotency import store as operations
from app.idempotency.models import Operation
from app.invalidation.models import Dependency
from app.memories import store
from app.memories.lifecycle import doubt
from app.memories.models import Memory

INVALIDATE_TASK = "dependencies.invalidate"
KIND = operations.job_kind("invalidate", INVALIDATE_TASK)
FLAG = "dependency-changed"
ACTOR = audit.system_actor("invalidate")


def put(
    session: Session, *, tenant_id: uuid.UUID, key: str, value: str
) -> tuple[Dependency, Operation | None]:
    """Set ``key`` to ``value``; a new or different value queues an invalidation job (sent
    once the caller's unit of work commits)."""
    row = session.get(Dependency, (tenant_id, key), with_for_update=True)
    if row is not None and row.value == value:
        return row, None
    if row is None:
        row = Dependency(tenant_id=tenant_id, key=key, value=value)
    row.value = value
    row.updated_at = utcnow()
    session.add(row)
    operation = operations.accept_job(
        session, KIND, {"key": key}, tenant_id=tenant_id,
        method="PUT", path=f"/v1/dependencies/{key}",
    )
    return row, operation


def listing(session: Session, *, tenant_id: uuid.UUID) -> Sequence[Dependency]:
    return session.exec(
        select(Dependency).where(Dependency.tenant_id == tenant_id)
        .order_by(col(Dependency.key))
    ).all()


def invalidate(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> bool:
    """Mark live memories depending on another value suspect; False if already finished."""
    operation = operations.lock_job(session, tenant_id=tenant_id, operation_id=operation_id,
                                    kind=KIND)
    if operation is None or operation.status in operations.FINISHED:
        return False
    key = str((operations.payload_of(operation) or {}).get("key", ""))
    suspected = invalidate_key(session, tenant_id=tenant_id, key=key)
    operations.succeed(session, operation, {"suspected": suspected, "key": key})
    return True


def invalidate_key(session: Session, *, tenant_id: uuid.UUID, key: str) -> list[str]:
    """Flag every live memory whose `depends_on[key]` differs from the current value."""
    current = session.get(Dependency, (tenant_id, key))
    if current is None:
        return []
    # Locked in id order in one statement, loaded with the lock (no read per memory).
    dependent = store.lock_depending(session, tenant_id=tenant_id, key=key,
                                     other_than=current.value)
    suspected = [str(memory.id) for memory in dependent if mark(session, memory, key=key)]
    session.flush()
    return suspected


def mark(session: Session, memory: Memory, *, key: str) -> bool:
    """Flag one locked memory; False when an earlier run already did. The caller flushes."""
    return doubt(session, memory, FLAG, reason=f"dependency {key} changed", actor=ACTOR,
                 flush=False)
