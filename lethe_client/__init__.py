"""Python client for the Lethe memory service (API.md): sync and async, typed, retrying.

    from lethe_client import Lethe
    with Lethe("http://127.0.0.1:8000", api_key) as lethe:
        memory = lethe.memories.create("user:42", "I live in Lisbon.")
"""

from lethe_client.client import AsyncLethe, Lethe
from lethe_client.errors import (
    Conflict,
    Forbidden,
    IdempotencyInProgress,
    IdempotencyKeyReused,
    LegalHold,
    LetheError,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    SourceExcluded,
    Unauthorized,
    ValidationFailed,
)
from lethe_client.models import ForgetRequestHandled, Memory, MemoryWritten
from lethe_client.retries import RetryPolicy

__all__ = [
    "AsyncLethe", "Conflict", "Forbidden", "ForgetRequestHandled", "IdempotencyInProgress",
    "IdempotencyKeyReused", "LegalHold", "Lethe", "LetheError", "Memory", "MemoryWritten",
    "NotFound", "PreconditionFailed", "PreconditionRequired", "RateLimited", "RetryPolicy",
    "ServerError", "ServiceUnavailable", "SourceExcluded", "Unauthorized", "ValidationFailed",
]
