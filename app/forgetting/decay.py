"""Volatility decay: an active memory not validated within its class's half-life turns suspect.

Half-lives are tenant settings (days, fractions allowed). The clock is a parameter so tests
and the maintenance endpoint decide "now"; beat passes the real time.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy import text
from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.memories.models import Memory, MemoryState, Volatility
from app.memories.transitions import transition
from app.settings import service as tenant_settings

FLAG = "stale"
ACTOR = audit.system_actor("decay")

# Re-checked after the row lock (READ COMMITTED), so an overlapping run skips what the first
# one already moved.
_DUE = text(
    """
    SELECT id FROM memory
    WHERE tenant_id = :tenant_id AND state = 'active' AND volatility = :volatility
      AND last_validated_at < :cutoff
    ORDER BY id
    FOR UPDATE
    """
)


def decay(session: Session, *, tenant_id: uuid.UUID, now: datetime | None = None) -> list[str]:
    """Move every overdue active memory of the tenant to suspect with flag `stale`."""
    now = now or utcnow()
    half_lives = tenant_settings.get(session, tenant_id=tenant_id).half_lives
    moved: list[str] = []
    for volatility in Volatility:
        days = float(getattr(half_lives, volatility.value))
        cutoff = now - timedelta(days=days)
        ids = session.execute(_DUE, {"tenant_id": tenant_id, "volatility": volatility.value,
                                     "cutoff": cutoff}).scalars().all()
        for memory_id in ids:
            memory = session.get(Memory, memory_id)
            assert memory is not None
            if memory.state != MemoryState.active:
                continue
            memory.flags = [*memory.flags, FLAG] if FLAG not in memory.flags else memory.flags
            transition(session, memory, MemoryState.suspect,
                       reason=f"{volatility.value} half-life of {days:g} days elapsed",
                       actor=ACTOR)
            moved.append(str(memory.id))
    return moved
