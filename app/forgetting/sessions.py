"""Closing an agent run (a `session`): its working memories are evicted, the rest stay.

Eviction is a forget through the one lifecycle path (`lifecycle.tombstone`: content purged,
stored answers redacted, audited) followed by the forget's cascade (`forget.after_forget`).
It excludes no source: the run's scratch was never wrong, so re-importing the same source
is allowed. It leaves no retraction record either: nobody asked to forget anything, and a
record per run would bury the user's real requests in recall's `retractions`. A memory under
a legal hold is kept (holds win) and listed in `held`; promoted and durable memories of the
run are kept.

This is a service function, not only a route: the MCP server and the mem0-compatible routes
close runs too.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sqlmodel import Session

from app.forgetting import forget
from app.forgetting.schemas import HeldMemory, SessionClosed
from app.keys import digests
from app.memories import store
from app.memories.lifecycle import tombstone
from app.memories.models import Volatility

REASON = "session closed"


@dataclass(frozen=True)
class Closed:
    session: str
    evicted: list[uuid.UUID] = field(default_factory=list)
    kept: list[uuid.UUID] = field(default_factory=list)
    # Working memories a legal hold kept: memory ID → hold ID.
    held: dict[uuid.UUID, uuid.UUID] = field(default_factory=dict)


def close(session: Session, *, tenant_id: uuid.UUID, name: str, actor: str,
          subject: str | None = None) -> Closed:
    """Evict the run's working memories (those no hold covers); keep the others. With
    ``subject``, only that subject's memories of the run are looked at.

    Closing again evicts what was written to the run since, and otherwise nothing."""
    rows = store.lock_session(session, tenant_id=tenant_id, name=name,
                              subject=digests.optional_subject(tenant_id, subject))
    working = [memory for memory in rows if memory.volatility == Volatility.working.value]
    held = store.held_by(session, tenant_id=tenant_id, ids=[memory.id for memory in working])
    evicted = [memory for memory in working if memory.id not in held]
    tombstone(session, evicted, reason=REASON, actor=actor)
    evicted_ids = [memory.id for memory in evicted]
    forget.after_forget(session, tenant_id=tenant_id, memory_ids=evicted_ids, actor=actor)
    gone = set(evicted_ids)
    return Closed(session=name, evicted=evicted_ids,
                  kept=[memory.id for memory in rows if memory.id not in gone], held=held)


def public(closed: Closed) -> SessionClosed:
    """The API's answer for a closed run."""
    return SessionClosed(
        session=closed.session, evicted=closed.evicted, kept=closed.kept,
        held=[HeldMemory(memory_id=memory_id, hold_id=hold_id)
              for memory_id, hold_id in sorted(closed.held.items())])
