"""Retention: deprecated memories age into quarantine, quarantined ones into deletion.

The windows are tenant settings (`retention.deprecated_days`, `retention.quarantine_days`,
fractions allowed), counted from `memory.state_changed_at`, which only a state transition
moves: an edit of a deprecated memory does not restart its clock. A memory quarantined by a
compliance decision or by forget-by-description in archive mode ages out the same way.
Deletion is the ordinary forget (`forget_one`): tombstone and content purge in the same
transaction. It records no retraction: a retraction tells the consuming model "the user asked
me to forget this", and nobody asked; the audit chain records every move. A quarantined
memory under a legal hold stays quarantined: the selection (`store.lock_aged`) leaves it out,
and the lifecycle would refuse its deletion anyway.

The clock is a parameter so tests and the maintenance endpoint decide "now"; beat passes the
real time.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.forgetting.forget import after_forget, forget_one
from app.memories import store
from app.memories.lifecycle import transition
from app.memories.models import MemoryState
from app.tenant_settings import service as tenant_settings

ACTOR = audit.system_actor("retention")
QUARANTINED, FORGOTTEN = "quarantined", "forgotten"


def retention(
    session: Session, *, tenant_id: uuid.UUID, now: datetime | None = None,
    limit: int | None = None,
) -> dict[str, list[str]]:
    """Quarantine deprecated memories past their window and forget quarantined ones past theirs.

    With ``limit`` at most that many memories move, so a caller can commit in batches; a run
    that returns fewer than ``limit`` has nothing left that was due at ``now``.
    """
    now = now or utcnow()
    windows = tenant_settings.get(session, tenant_id=tenant_id).retention
    deprecated_cutoff = now - timedelta(days=float(windows.deprecated_days))
    quarantine_cutoff = now - timedelta(days=float(windows.quarantine_days))
    moved: dict[str, list[str]] = {QUARANTINED: [], FORGOTTEN: []}
    # Every row lock first, in id order, in one statement: audit appends hold the tenant's
    # chain lock until commit, so no lock may be waited for after the first one. Both steps
    # share the statement, so a memory quarantined by this run is not also forgotten by it.
    # A concurrent run waits on the locked rows and, once they are committed, the rows no
    # longer match (PostgreSQL re-checks the WHERE clause of a locked row), so nothing moves
    # twice.
    due = store.lock_aged(session, tenant_id=tenant_id, deprecated_before=deprecated_cutoff,
                          quarantined_before=quarantine_cutoff, limit=limit)
    for memory in due:
        if memory.state == MemoryState.deprecated:
            transition(session, memory, MemoryState.quarantined, actor=ACTOR, flush=False,
                       reason=f"deprecated for more than {windows.deprecated_days:g} days")
            moved[QUARANTINED].append(str(memory.id))
        elif memory.state == MemoryState.quarantined:
            forget_one(session, memory, actor=ACTOR,
                       reason=f"quarantined for more than {windows.quarantine_days:g} days")
            moved[FORGOTTEN].append(str(memory.id))
    after_forget(session, tenant_id=tenant_id, actor=ACTOR,
                 memory_ids=[uuid.UUID(memory_id) for memory_id in moved[FORGOTTEN]])
    session.flush()
    return moved
