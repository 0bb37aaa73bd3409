"""CSRF tokens: an HMAC of the session's nonce, carried by every form as `csrf_token`.

A signed-in form binds its token to the session (a token dies with its session); the sign-in
form, before any session exists, binds it to a random pre-session cookie. A page on another
site can read neither the cookie nor the token, so it cannot build a post that passes.
"""

from __future__ import annotations

import hashlib
import hmac

from markupsafe import Markup, escape
from starlette.requests import Request

from app.core.runtime import get_runtime
from console import session as console_session

FIELD = "csrf_token"
HEADER = "x-csrf-token"
PRE_SESSION_COOKIE = "lethe_console_pre"


def _token(nonce: str) -> str:
    key = get_runtime().secret_key.encode()
    return hmac.new(key, b"console-csrf:" + nonce.encode(), hashlib.sha256).hexdigest()


def _nonce(request: Request, *, create: bool) -> str | None:
    login = console_session.from_request(request)
    if login is not None:
        return login.nonce
    pre = request.cookies.get(PRE_SESSION_COOKIE) or getattr(request.state, "csrf_pre", None)
    if pre is None and create:
        pre = console_session.new_nonce()
        request.state.csrf_pre = pre
        console_session.set_later(request, PRE_SESSION_COOKIE, pre, max_age=None)
    return pre


def token_for(request: Request) -> str:
    """The token this request's forms carry (creating the pre-session cookie when needed)."""
    nonce = _nonce(request, create=True)
    assert nonce is not None
    return _token(nonce)


def field_for(request: Request) -> Markup:
    """The hidden input every form includes: ``{{ csrf_field }}`` in a template."""
    return Markup('<input type="hidden" name="{}" value="{}">').format(
        FIELD, escape(token_for(request)))


def is_valid(request: Request, presented: str | None) -> bool:
    nonce = _nonce(request, create=False)
    if nonce is None or not presented:
        return False
    return hmac.compare_digest(_token(nonce), presented)
