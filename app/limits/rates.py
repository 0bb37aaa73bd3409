"""A token bucket per API key, kept in this process.

Each key holds up to its minute's worth of requests and regains them evenly over the minute,
so a burst up to the limit passes and a steady caller is held to the rate. The buckets live in
the API process (a second API process keeps its own): enough to stop one runaway client without
a write per request to the database.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[Hashable, _Bucket] = {}
        self._lock = threading.Lock()

    def admit(self, key: Hashable, per_minute: int) -> float | None:
        """Take one request from ``key``'s bucket: None when admitted, else the seconds until
        one is regained."""
        rate = per_minute / 60.0
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(float(per_minute), now)
            bucket.tokens = min(float(per_minute), bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return None
            return (1.0 - bucket.tokens) / rate

    def reset(self) -> None:
        with self._lock:
            self._buckets.clear()


def retry_after(seconds: float) -> str:
    """A `Retry-After` value: whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds)))
