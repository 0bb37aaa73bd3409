"""Which answers the SDK retries and how long it waits: real httpx responses, no server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx

from lethe_client.retries import RetryPolicy, retry_after

PROBLEMS = "https://lethe.dev/problems/"


def _problem(status: int, slug: str, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers,
                          json={"type": PROBLEMS + slug, "title": slug, "status": status,
                                "detail": slug})


def test_only_an_in_progress_conflict_is_retried() -> None:
    policy = RetryPolicy()
    assert policy.delay(0, _problem(409, "idempotency-in-progress", **{"Retry-After": "2"})) == 2
    assert policy.delay(0, _problem(409, "legal-hold")) is None
    assert policy.delay(0, _problem(412, "revision-mismatch")) is None
    assert policy.delay(0, _problem(422, "idempotency-key-reused")) is None


def test_retry_after_is_honoured_in_seconds_or_as_a_date_and_retries_run_out() -> None:
    policy = RetryPolicy(max_retries=2, max_retry_after=30)
    assert policy.delay(0, _problem(429, "rate-limited", **{"Retry-After": "3"})) == 3
    assert policy.delay(2, _problem(429, "rate-limited", **{"Retry-After": "3"})) is None
    assert policy.delay(0, _problem(429, "rate-limited", **{"Retry-After": "120"})) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    waited = retry_after(later)
    assert waited is not None and 8 <= waited <= 10
    backoff = policy.delay(1, _problem(503, "unavailable"))
    assert backoff is not None and 0.5 <= backoff <= 1.0
