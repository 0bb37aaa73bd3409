"""Decay and retention one batch at a time, as beat and the maintenance endpoint run them.

A batch moves at most ``size`` memories and commits before the next begins, so a large run
never holds the tenant's audit chain lock (which every auditing request of the tenant waits
for) for long.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from app.forgetting import decay, expiry, retention


@dataclass(frozen=True)
class Batch:
    moved: dict[str, list[str]]  # memory IDs by result field ("suspected", "forgotten" …)
    last: bool  # fewer than a full batch moved: nothing more is due

    @property
    def count(self) -> int:
        return sum(len(ids) for ids in self.moved.values())


Step = Callable[..., Batch]


def decay_batch(session: Session, *, tenant_id: uuid.UUID, now: datetime, size: int) -> Batch:
    ids = decay.decay(session, tenant_id=tenant_id, now=now, limit=size)
    return Batch({"suspected": ids}, last=len(ids) < size)


def retention_batch(
    session: Session, *, tenant_id: uuid.UUID, now: datetime, size: int
) -> Batch:
    moved = retention.retention(session, tenant_id=tenant_id, now=now, limit=size)
    return Batch(moved, last=sum(len(ids) for ids in moved.values()) < size)


def expiry_batch(session: Session, *, tenant_id: uuid.UUID, now: datetime, size: int) -> Batch:
    ids = expiry.expire(session, tenant_id=tenant_id, now=now, limit=size)
    return Batch({"expired": ids}, last=len(ids) < size)
