"""Volatility decay: an active memory not validated within its class's half-life turns suspect.

Half-lives are tenant settings (days, fractions allowed; seconds for `working`). The clock is
a parameter so tests and the maintenance endpoint decide "now"; beat passes the real time.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.memories import store
from app.memories.lifecycle import doubt
from app.memories.models import MemoryState, Volatility
from app.tenant_settings import service as tenant_settings

FLAG = "stale"
ACTOR = audit.system_actor("decay")


def decay(
    session: Session, *, tenant_id: uuid.UUID, now: datetime | None = None,
    limit: int | None = None,
) -> list[str]:
    """Move every overdue active memory of the tenant to suspect with flag `stale`.

    With ``limit`` at most that many move, so a caller can commit in batches; fewer than
    ``limit`` means nothing else was due at ``now``.
    """
    now = now or utcnow()
    half_lives = tenant_settings.get(session, tenant_id=tenant_id).half_lives
    seconds = {volatility: half_lives.seconds(volatility.value) for volatility in Volatility}
    # Every row lock first, in id order, in one statement: audit appends hold the tenant's
    # chain lock until commit, so no row lock may be waited for after the first append. A
    # concurrent run waits on the locked rows; once they are committed they no longer match
    # (PostgreSQL re-checks a locked row's WHERE clause), so nothing moves twice.
    due = store.lock_overdue(
        session, tenant_id=tenant_id, limit=limit,
        validated_before={volatility.value: now - timedelta(seconds=half_life)
                          for volatility, half_life in seconds.items()},
    )
    moved: list[str] = []
    for memory in due:
        if memory.state != MemoryState.active:
            continue  # the lock returns the row as committed; the database re-checked it too
        volatility = Volatility(memory.volatility)
        half_life = _spoken(volatility, seconds[volatility])
        if doubt(session, memory, FLAG, actor=ACTOR, flush=False,
                 reason=f"{volatility.value} half-life of {half_life} elapsed"):
            moved.append(str(memory.id))
    session.flush()
    return moved


def _spoken(volatility: Volatility, seconds: float) -> str:
    # Durable classes are set in days, the working class in seconds.
    if volatility is Volatility.working:
        return f"{seconds:g} seconds"
    return f"{seconds / 86_400:g} days"
