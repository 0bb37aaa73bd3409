"""The console's login cookie: a signed, expiring record of which key signed in.

The cookie names the tenant and the key row, never the raw key: a stolen cookie dies with its
lifetime or with the key's revocation, and the key itself never reaches the browser's storage.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request
from starlette.responses import Response

from app.core.config import get_settings
from app.core.runtime import get_runtime

COOKIE_NAME = "lethe_console"
SALT = "console-session"
# The mount point in app/main.py; used only when the request carries no root_path.
DEFAULT_PATH = "/console"


@dataclass(frozen=True)
class ConsoleSession:
    """A verified cookie: still needs the key re-checked against the database."""

    tenant_id: uuid.UUID
    key_id: uuid.UUID
    issued_at: datetime

    @property
    def expires_at(self) -> datetime:
        return self.issued_at + lifetime()


def lifetime() -> timedelta:
    return timedelta(hours=get_settings().console_session_hours)


def _max_age_seconds() -> int:
    # One figure for both the cookie's Max-Age and the signature check, so the browser and
    # the server agree on when a login ends.
    return int(lifetime().total_seconds())


def _serializer() -> URLSafeTimedSerializer:
    # Built per call so a rotated secret (runtime cache cleared) applies without a restart.
    return URLSafeTimedSerializer(get_runtime().secret_key, salt=SALT)


def issue(*, tenant_id: uuid.UUID, key_id: uuid.UUID) -> str:
    return _serializer().dumps({"tenant_id": str(tenant_id), "key_id": str(key_id)})


def read(token: str | None) -> ConsoleSession | None:
    """The session a cookie value proves, or None for missing, tampered or expired values."""
    if not token:
        return None
    try:
        payload, signed_at = _serializer().loads(
            token, max_age=_max_age_seconds(), return_timestamp=True
        )
        return ConsoleSession(
            tenant_id=uuid.UUID(payload["tenant_id"]),
            key_id=uuid.UUID(payload["key_id"]),
            issued_at=signed_at.astimezone(UTC),
        )
    # A correctly signed but malformed payload can only come from an older format: log out.
    except (BadSignature, KeyError, TypeError, ValueError):
        return None


def from_request(request: Request) -> ConsoleSession | None:
    return read(request.cookies.get(COOKIE_NAME))


def _cookie_path(request: Request) -> str:
    # root_path is where this sub-app is mounted (plus any proxy prefix), so the cookie is
    # sent to the console and nowhere else on the host.
    return request.scope.get("root_path") or DEFAULT_PATH


def set_cookie(response: Response, request: Request, token: str) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        max_age=_max_age_seconds(),
        path=_cookie_path(request),
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def clear_cookie(response: Response, request: Request) -> None:
    # Browsers only replace a cookie whose path and flags match the one they hold.
    response.delete_cookie(
        COOKIE_NAME,
        path=_cookie_path(request),
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
