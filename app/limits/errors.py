"""Refusals for going over a limit."""

from __future__ import annotations

from app.core.errors import LetheError


class RateLimited(LetheError):
    status, slug, title = 429, "rate-limited", "Too many requests for this key"


class MemoryQuotaExceeded(LetheError):
    status, slug, title = 409, "memory-quota-exceeded", "The tenant holds its quota of memories"

    def __init__(self, quota: int) -> None:
        super().__init__(f"The tenant may hold {quota} memories; forget some first.",
                         quota=quota)


class IngestTooLarge(LetheError):
    status, slug, title = 413, "ingest-too-large", "Ingestion payload larger than the quota"
