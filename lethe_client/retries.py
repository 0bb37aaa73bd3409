"""When to retry, and the exchange of one logical call that both clients drive.

`exchange` is a generator: it yields a `Send` (the driver sends it and passes back the
response or the transport error) or a `Sleep` (the driver waits, blocking or awaiting), and
returns the call's parsed value. The sync and async clients differ only in how they send and
sleep, so the retry rules below exist once.
"""

from __future__ import annotations

import random
from collections.abc import Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
from pydantic_core import to_jsonable_python

from lethe_client.call import Call
from lethe_client.errors import PROBLEM_BASE

T = TypeVar("T")

IN_PROGRESS = PROBLEM_BASE + "idempotency-in-progress"


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 429, 503 and 409 `idempotency-in-progress`, and of transport errors for
    calls that are safe to repeat (reads, and writes, which carry an Idempotency-Key)."""

    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    # A Retry-After longer than this is not waited for: the error is raised instead.
    max_retry_after: float = 60.0

    def backoff_for(self, attempt: int) -> float:
        """Exponential with full jitter, so many clients refused together spread out."""
        ceiling: float = min(self.max_backoff, self.backoff * 2 ** attempt)
        return random.uniform(ceiling / 2, ceiling)

    def delay(self, attempt: int, response: httpx.Response) -> float | None:
        """Seconds to wait before retrying after ``response`` (attempt 0 is the first
        send), or None when it is the answer."""
        if attempt >= self.max_retries or not retryable(response):
            return None
        after = retry_after(response.headers.get("retry-after"))
        if after is None:
            return self.backoff_for(attempt)
        return after if after <= self.max_retry_after else None


def retryable(response: httpx.Response) -> bool:
    if response.status_code in (429, 503):
        return True
    if response.status_code != 409:
        return False
    try:
        problem = response.json()
    except ValueError:
        return False
    return isinstance(problem, dict) and problem.get("type") == IN_PROGRESS


def retry_after(value: str | None) -> float | None:
    """`Retry-After` as seconds: a number of seconds or an HTTP date (RFC 9110 10.2.3)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


@dataclass(frozen=True)
class Send:
    method: str
    path: str
    headers: dict[str, str]
    params: dict[str, Any] | None
    json: Any


@dataclass(frozen=True)
class Sleep:
    seconds: float


Reply = httpx.Response | httpx.TransportError | None


def exchange(call: Call[T], policy: RetryPolicy) -> Generator[Send | Sleep, Reply, T]:
    send = Send(call.method, call.path, call.request_headers(), call.params,
                to_jsonable_python(call.json) if call.json is not None else None)
    attempt = 0
    while True:
        reply = yield send
        if isinstance(reply, httpx.TransportError):
            # Safe to repeat: a read, or a write whose retry carries the same key.
            if attempt >= policy.max_retries:
                raise reply
            yield Sleep(policy.backoff_for(attempt))
        else:
            assert reply is not None
            delay = policy.delay(attempt, reply)
            if delay is None:
                return call.parse(reply)
            yield Sleep(delay)
        attempt += 1
