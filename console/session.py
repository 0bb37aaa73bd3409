"""The console's session cookie: a signed record of which staff member signed in, and when
they were last active.

The signature's timestamp is the last activity: every signed-in page re-signs the cookie, so a
session ends after the tenant's `console.session_minutes` of inactivity (checked by
console/deps.py, which knows the tenant) and at the latest `console_session_hours` after
sign-in. The cookie names the tenant and the staff row, never the email or the password.

It also names the staff row's `session_generation` when it was issued: signing out, removing
the member and changing their role add one to it (app/staff/store.py), so a copy of any earlier
cookie stops working on every API process, with no session state kept anywhere else.
"""

from __future__ import annotations

import secrets
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
# The longest idle time a tenant may choose (tenant_settings Console.session_minutes, le=1440):
# the signature check's outer bound, before the tenant's own figure is known.
MAX_IDLE = timedelta(minutes=1440)
_PENDING = "console_set_cookie"


@dataclass(frozen=True)
class ConsoleSession:
    """A verified cookie: the staff row still needs re-checking against the database."""

    tenant_id: uuid.UUID
    staff_id: uuid.UUID
    # Random per sign-in: CSRF tokens are bound to it, so a token dies with its session.
    nonce: str
    # The staff row's session_generation when this session began: a mismatch means it ended.
    generation: int
    signed_in_at: datetime
    last_active_at: datetime

    @property
    def hard_expires_at(self) -> datetime:
        return self.signed_in_at + lifetime()


def lifetime() -> timedelta:
    """The longest a session lasts, however active."""
    return timedelta(hours=get_settings().console_session_hours)


def _serializer() -> URLSafeTimedSerializer:
    # Built per call so a rotated secret (runtime cache cleared) applies without a restart.
    return URLSafeTimedSerializer(get_runtime().secret_key, salt=SALT)


def new_nonce() -> str:
    return secrets.token_urlsafe(18)


def issue(*, tenant_id: uuid.UUID, staff_id: uuid.UUID, nonce: str, generation: int,
          signed_in_at: datetime) -> str:
    return _serializer().dumps({
        "tenant_id": str(tenant_id), "staff_id": str(staff_id), "nonce": nonce,
        "generation": generation, "signed_in_at": int(signed_in_at.timestamp()),
    })


def renew(login: ConsoleSession) -> str:
    """The same session, signed now: the cookie an active page hands back."""
    return issue(tenant_id=login.tenant_id, staff_id=login.staff_id, nonce=login.nonce,
                 generation=login.generation, signed_in_at=login.signed_in_at)


def read(token: str | None, *, now: datetime | None = None) -> ConsoleSession | None:
    """The session a cookie value proves, or None for missing, tampered or expired values
    (idle past the longest allowed idle time, or past the hard lifetime)."""
    if not token:
        return None
    try:
        payload, signed_at = _serializer().loads(
            token, max_age=int(MAX_IDLE.total_seconds()), return_timestamp=True
        )
        login = ConsoleSession(
            tenant_id=uuid.UUID(payload["tenant_id"]),
            staff_id=uuid.UUID(payload["staff_id"]),
            nonce=str(payload["nonce"]),
            generation=int(payload["generation"]),
            signed_in_at=datetime.fromtimestamp(int(payload["signed_in_at"]), UTC),
            last_active_at=signed_at.astimezone(UTC),
        )
    # A correctly signed but malformed payload can only come from an older format: sign out.
    except (BadSignature, KeyError, TypeError, ValueError):
        return None
    if (now or datetime.now(UTC)) > login.hard_expires_at:
        return None
    return login


def from_request(request: Request) -> ConsoleSession | None:
    return read(request.cookies.get(COOKIE_NAME))


def cookie_path(request: Request) -> str:
    # root_path is where this sub-app is mounted (plus any proxy prefix), so the cookie is
    # sent to the console and nowhere else on the host.
    return request.scope.get("root_path") or DEFAULT_PATH


def secure_cookies(request: Request) -> bool:
    # Production always: behind a TLS-terminating proxy the app may see plain http. In
    # development and tests only over https, or the browser would never send it back.
    return request.url.scheme == "https" or get_settings().environment == "production"


def set_cookie(response: Response, request: Request, name: str, value: str,
               max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, path=cookie_path(request),
                        secure=secure_cookies(request), httponly=True, samesite="strict")


def clear_cookie(response: Response, request: Request, name: str = COOKIE_NAME) -> None:
    # Browsers only replace a cookie whose path and flags match the one they hold.
    response.delete_cookie(name, path=cookie_path(request), secure=secure_cookies(request),
                           httponly=True, samesite="strict")


def set_later(request: Request, name: str, value: str, max_age: int | None) -> None:
    """Have `CookieMiddleware` set a cookie on whatever response this request ends with:
    dependencies cannot reach a response the page builds itself."""
    carrier = Response()
    set_cookie(carrier, request, name, value, max_age)
    pending: dict[str, bytes] = getattr(request.state, _PENDING, None) or {}
    pending[name] = carrier.headers.raw[-1][1]
    setattr(request.state, _PENDING, pending)


def pending_cookies(state: dict[str, object]) -> dict[str, bytes]:
    """The Set-Cookie values `set_later` left in a request's state, by cookie name."""
    pending = state.get(_PENDING)
    return dict(pending) if isinstance(pending, dict) else {}
