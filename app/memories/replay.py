"""A memory as it stood at a past instant, replayed from its audit trail (`as_of` reads).

Pure: the trail's events in, the memory's state, flags, current version, expiry and revision
at that instant out. Every change the lifecycle makes is an audit event naming what it moved
(`app/memories/lifecycle.py`): a transition its target state (and the flag of a doubt or an
expiry, the memory that superseded it), a content event the version it made current, a write
or correction that set `expires_at` its value, every change the new revision. Replaying the
events up to an instant is therefore the memory at that instant. What no event records (the
volatility, key, source, metadata) is shown as it is now; forgotten memories are never
replayed (their content is gone, whenever they were forgotten).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

TRANSITION, FLAGGED = "memory.transition", "memory.flagged"


@dataclass(frozen=True)
class Event:
    action: str
    to_state: str | None
    details: Mapping[str, Any]
    created_at: datetime


@dataclass
class Then:
    """A memory at an instant."""

    state: str = "active"
    flags: list[str] = field(default_factory=list)
    version_id: uuid.UUID | None = None
    expires_at: datetime | None = None
    revision: int = 1
    superseded_by: uuid.UUID | None = None
    updated_at: datetime | None = None
    validated_at: datetime | None = None  # the last confirmation before the instant

    def expired(self, at: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= at


def replay(events: Iterable[Event]) -> Then:
    """The memory after ``events`` (its trail up to the instant, oldest first)."""
    state, revision = "active", 1
    flags: list[str] = []
    then = Then()
    for event in events:
        details = event.details
        then.updated_at = event.created_at
        if isinstance(details.get("revision"), int):
            revision = details["revision"]
        if details.get("version_id"):
            then.version_id = uuid.UUID(details["version_id"])
        if "expires_at" in details:
            then.expires_at = (None if details["expires_at"] is None
                               else datetime.fromisoformat(details["expires_at"]))
        if event.action == TRANSITION and event.to_state is not None:
            state = event.to_state
            if state == "active":
                flags = []  # the doubts that made it suspect were settled
                then.validated_at = event.created_at
            if details.get("superseded_by"):
                then.superseded_by = uuid.UUID(details["superseded_by"])
        flag = details.get("flag")
        if event.action in (TRANSITION, FLAGGED) and isinstance(flag, str) \
                and flag not in flags and state != "active":
            flags = [*flags, flag]
    return replace(then, state=state, revision=revision, flags=flags)
