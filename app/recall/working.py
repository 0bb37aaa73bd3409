"""Working memories in recall: flagged `stale` past one half-life, left out past the
tenant's multiple (`working.max_half_lives`), judged at the moment of the recall, so no beat
has to run first.

A working memory's age counts from its last validation (`last_validated_at`: its write, or
a confirm since), the clock decay counts durable half-lives from. The tenant's settings are
read with recall's own read-only SQL, in its pipeline, and read by the settings' schema, which
alone knows their defaults.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import DictRow, dict_row

from app.core.models import utcnow
from app.memories.models import Volatility
from app.memories.schemas import MemoryPublic
from app.tenant_settings.schemas import HalfLives, Working

FLAG = "stale"
_SETTINGS_SQL = "SELECT half_lives, working FROM tenant_settings WHERE tenant_id = %(tenant_id)s"


@dataclass(frozen=True)
class Clock:
    half_life_seconds: float
    max_half_lives: float
    now: datetime

    def half_lives(self, memory: MemoryPublic) -> float | None:
        """How many half-lives a working memory has lived; None for a durable one."""
        if memory.volatility is not Volatility.working:
            return None
        age = (self.now - memory.last_validated_at).total_seconds()
        return age / self.half_life_seconds

    def omitted(self, memory: MemoryPublic) -> bool:
        lived = self.half_lives(memory)
        return lived is not None and lived >= self.max_half_lives

    def stale(self, memory: MemoryPublic) -> bool:
        lived = self.half_lives(memory)
        return lived is not None and lived >= 1


def send(conn: psycopg.Connection[Any], *, tenant_id: uuid.UUID) -> psycopg.Cursor[DictRow]:
    """The tenant's working-memory settings, sent now and read by `clock` when needed."""
    cursor = conn.cursor(row_factory=dict_row)
    return cursor.execute(_SETTINGS_SQL, {"tenant_id": tenant_id})


def clock(cursor: psycopg.Cursor[DictRow]) -> Clock:
    row = cursor.fetchone()
    half_lives = HalfLives.model_validate(row["half_lives"] if row else {})
    working = Working.model_validate(row["working"] if row else {})
    return Clock(half_life_seconds=half_lives.working_seconds,
                 max_half_lives=working.max_half_lives, now=utcnow())
