"""Dependency values and the invalidation they trigger.

Changing a value queues one job; the job reads the value current *when it runs*, so jobs for
quick successive changes, redeliveries and overlapping runs all converge on the same end state.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import timedelta

from sqlmodel import Session, col, select

from app.audit import service as audit
from app.core.models import utcnow
from app.idempotency.models import Operation, OperationStatus
from app.invalidation.models import Dependency
from app.lifecycle.transitions import doubt
from app.memories import store
from app.memories.models import Memory

KIND = "invalidate"
FLAG = "dependency-changed"
ACTOR = audit.system_actor("invalidate")
FINISHED = (OperationStatus.succeeded, OperationStatus.failed)
# Job records live as long as idempotency records do; pruning only removes finished ones.
RETENTION = timedelta(days=7)


def put(
    session: Session, *, tenant_id: uuid.UUID, key: str, value: str
) -> tuple[Dependency, Operation | None]:
    """Set ``key`` to ``value``; a new or different value queues an invalidation job."""
    row = session.get(Dependency, (tenant_id, key), with_for_update=True)
    if row is not None and row.value == value:
        return row, None
    if row is None:
        row = Dependency(tenant_id=tenant_id, key=key, value=value)
    row.value = value
    row.updated_at = utcnow()
    session.add(row)
    operation = Operation(
        tenant_id=tenant_id, kind=KIND, request_method="PUT",
        request_path=f"/v1/dependencies/{key}",
        request_digest=hashlib.sha256(f"{key}\0{value}".encode()).hexdigest(),
        status=OperationStatus.queued, request_payload={"key": key},
        expires_at=utcnow() + RETENTION,
    )
    session.add(operation)
    session.flush()
    return row, operation


def listing(session: Session, *, tenant_id: uuid.UUID) -> Sequence[Dependency]:
    return session.exec(
        select(Dependency).where(Dependency.tenant_id == tenant_id)
        .order_by(col(Dependency.key))
    ).all()


def invalidate(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> bool:
    """Mark live memories depending on another value suspect; False if already finished."""
    operation = session.exec(
        select(Operation).where(Operation.id == operation_id, Operation.tenant_id == tenant_id,
                                Operation.kind == KIND)
        .with_for_update()
    ).first()
    if operation is None or operation.status in FINISHED:
        return False
    key = str((operation.request_payload or {}).get("key", ""))
    suspected = invalidate_key(session, tenant_id=tenant_id, key=key)
    operation.status = OperationStatus.succeeded
    operation.result = {"suspected": suspected, "key": key}
    operation.request_payload = None
    operation.updated_at = utcnow()
    session.add(operation)
    session.flush()
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
