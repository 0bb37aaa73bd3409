"""Problem+json answers as exceptions: one class per problem type the API documents.

`LetheError` carries what RFC 9457 says (`type`, `status`, `title`, `detail`) and the whole
body, so a field the server adds later (`current_revision`, `quota`) is still readable.
"""

from __future__ import annotations

from typing import Any

import httpx

PROBLEM_BASE = "https://lethe.dev/problems/"


class LetheError(Exception):
    """An answer of status 400 or more."""

    def __init__(self, *, status: int, type: str, title: str, detail: str,
                 body: dict[str, Any], headers: httpx.Headers | None = None) -> None:
        super().__init__(f"{status} {title}: {detail}")
        self.status = status
        self.type = type
        self.title = title
        self.detail = detail
        self.body = body
        self.headers = headers or httpx.Headers()

    @property
    def slug(self) -> str:
        """The last part of `type`, e.g. `revision-mismatch`."""
        return self.type.removeprefix(PROBLEM_BASE)

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")


class BadRequest(LetheError):
    """400."""


class Unauthorized(LetheError):
    """401: a missing, unknown or revoked key."""


class Forbidden(LetheError):
    """403: the key's role may not do that."""


class NotFound(LetheError):
    """404: missing, forgotten, or another tenant's."""


class Conflict(LetheError):
    """409."""


class LegalHold(Conflict):
    """409 `legal-hold`: a legal hold keeps what the call would destroy."""


class SourceExcluded(Conflict):
    """409 `source-excluded`: the cited source was forgotten; nothing was stored."""


class IdempotencyInProgress(Conflict):
    """409 `idempotency-in-progress`: the first request with this key still runs."""


class PreconditionFailed(LetheError):
    """412 `revision-mismatch`: the memory changed since the revision sent in If-Match."""

    @property
    def current_revision(self) -> int | None:
        value = self.body.get("current_revision")
        return value if isinstance(value, int) else None


class PreconditionRequired(LetheError):
    """428: the edit needs If-Match."""


class PayloadTooLarge(LetheError):
    """413."""


class ValidationFailed(LetheError):
    """422: the request is not valid."""


class IdempotencyKeyReused(ValidationFailed):
    """422 `idempotency-key-reused`: the key was used for another request."""


class RateLimited(LetheError):
    """429: retried while `Retry-After` allowed; raised when the retries ran out."""

    @property
    def retry_after(self) -> str | None:
        return self.headers.get("retry-after")


class ServerError(LetheError):
    """5xx."""


class ServiceUnavailable(ServerError):
    """503."""


BY_TYPE: dict[str, type[LetheError]] = {
    "legal-hold": LegalHold,
    "source-excluded": SourceExcluded,
    "idempotency-in-progress": IdempotencyInProgress,
    "idempotency-key-reused": IdempotencyKeyReused,
}
BY_STATUS: dict[int, type[LetheError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    412: PreconditionFailed, 413: PayloadTooLarge, 422: ValidationFailed,
    428: PreconditionRequired, 429: RateLimited, 503: ServiceUnavailable,
}


def from_response(response: httpx.Response) -> LetheError:
    """The exception for an answer of status 400 or more, problem+json or not."""
    try:
        parsed = response.json()
    except ValueError:
        parsed = None
    body: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
    type_ = str(body.get("type") or "about:blank")
    slug = type_.removeprefix(PROBLEM_BASE)
    status = response.status_code
    cls = BY_TYPE.get(slug) or BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else LetheError
    return cls(status=status, type=type_,
               title=str(body.get("title") or response.reason_phrase),
               detail=str(body.get("detail") or response.text[:500]),
               body=body, headers=response.headers)
