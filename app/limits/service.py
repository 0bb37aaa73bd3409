"""Applying a tenant's limits (tenant setting `limits`, app/tenant_settings/schemas.py).

The settings are read at most every few seconds per tenant: a rate check on every request must
not add a query to every request. A change made with `PATCH /v1/settings` applies within
`SETTINGS_TTL_SECONDS`.
"""

from __future__ import annotations

import threading
import time
import uuid

from sqlmodel import Session

from app.core.config import get_settings
from app.core.errors import NotFound
from app.core.uow import unit_of_work
from app.limits.errors import IngestTooLarge, RateLimited
from app.limits.rates import RateLimiter, retry_after
from app.tenant_settings import service as tenant_settings
from app.tenant_settings.schemas import Limits

SETTINGS_TTL_SECONDS = 5.0

_limiter = RateLimiter()
_cache: dict[uuid.UUID, tuple[float, Limits]] = {}
_cache_lock = threading.Lock()


def limits_for(tenant_id: uuid.UUID, session: Session | None = None) -> Limits:
    """The tenant's limits, as read at most `SETTINGS_TTL_SECONDS` ago.

    A caller inside a transaction passes its ``session``, which a stale entry is read
    through: a second unit of work would take a second pooled connection while the first is
    held, and a pool's worth of requests doing so at once (the entry expires under them all
    together) wait on each other until the pool times out and answers 503.
    """
    now = time.monotonic()
    with _cache_lock:
        cached = _cache.get(tenant_id)
    if cached is not None and cached[0] > now:
        return cached[1]
    try:
        if session is not None:
            limits = tenant_settings.get(session, tenant_id=tenant_id).limits
        else:
            with unit_of_work(tenant_id) as own:
                limits = tenant_settings.get(own, tenant_id=tenant_id).limits
    except NotFound:
        # No settings row: the defaults, rather than refusing every request of the tenant.
        limits = Limits()
    with _cache_lock:
        _cache[tenant_id] = (now + SETTINGS_TTL_SECONDS, limits)
    return limits


def forget_cached(tenant_id: uuid.UUID | None = None) -> None:
    """Drop cached limits (all of them without ``tenant_id``) and the rate buckets with them."""
    with _cache_lock:
        if tenant_id is None:
            _cache.clear()
            _limiter.reset()
        else:
            _cache.pop(tenant_id, None)


def rate_limited(limits: Limits) -> bool:
    """Whether the tenant's keys are rate limited: its setting, or by default only in
    production (development and test runs hammer the API on purpose)."""
    if limits.rate_limit == "default":
        return get_settings().environment == "production"
    return limits.rate_limit == "on"


def admit(*, tenant_id: uuid.UUID, key_id: uuid.UUID) -> None:
    """Count one request of the key; 429 with `Retry-After` beyond the tenant's rate."""
    limits = limits_for(tenant_id)
    if not rate_limited(limits):
        return
    wait = _limiter.admit(key_id, limits.requests_per_minute)
    if wait is not None:
        raise RateLimited(
            f"This key may send {limits.requests_per_minute} requests a minute.",
            headers={"Retry-After": retry_after(wait)},
        )


def memory_quota(session: Session, *, tenant_id: uuid.UUID) -> int:
    """How many memories (not forgotten) the tenant may hold; 0 for no quota. The memories
    service counts and refuses (`MemoryQuotaExceeded`) in its transaction, ``session``:
    limits know no memory table."""
    return limits_for(tenant_id, session).max_memories


def refuse_large_ingest(*, tenant_id: uuid.UUID, size: int) -> None:
    """413 when an ingestion payload is larger than the tenant allows."""
    allowed = limits_for(tenant_id).max_ingest_bytes
    if size > allowed:
        raise IngestTooLarge(f"Ingestion payloads are limited to {allowed} bytes for this tenant.")
