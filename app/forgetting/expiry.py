"""Expiry: a live memory whose `expires_at` has passed becomes `deprecated` with flag
`expired` (audited); retention takes it from there.

Recall and live listings leave an expired memory out from the instant itself, judging
`expires_at` against the clock at read time (app/memories/store.py, `UNEXPIRED_SQL`,
`shown_live`): this job only records what already holds. The clock is a parameter, as decay's,
so tests and the maintenance endpoint decide "now"; beat passes the real time.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.memories import lifecycle, store
from app.memories.models import LIVE_STATES

ACTOR = audit.system_actor("expiry")


def expire(
    session: Session, *, tenant_id: uuid.UUID, now: datetime | None = None,
    limit: int | None = None,
) -> list[str]:
    """Deprecate every live memory of the tenant that had expired by ``now`` (at most
    ``limit``: fewer means nothing else was due); the IDs moved."""
    now = now or utcnow()
    # Every row lock first, in id order, in one statement (audit appends hold the tenant's
    # chain lock until commit); a concurrent run's rows no longer match once it commits.
    due = store.lock_expired(session, tenant_id=tenant_id, now=now, limit=limit)
    moved: list[str] = []
    for memory in due:
        if memory.state not in LIVE_STATES or not store.expired(memory, now):
            continue
        lifecycle.expire(session, memory, actor=ACTOR, flush=False)
        moved.append(str(memory.id))
    session.flush()
    return moved
