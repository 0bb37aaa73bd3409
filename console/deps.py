"""Request dependencies shared by console pages."""

from __future__ import annotations

import hashlib
import hmac
from typing import Annotated, Any

from fastapi import Depends, Request
from markupsafe import Markup

from app.core import uow
from app.core.runtime import get_runtime
from console import auth
from console import session as console_session
from console.templating import templates


class NotSignedIn(Exception):
    """Raised by `require_viewer`; the console answers it with a redirect to the login page."""


class CrossSiteForm(Exception):
    """A form posted from another site; refused so no page elsewhere can log anyone in or out."""


def current_viewer(request: Request) -> auth.Viewer | None:
    login = console_session.from_request(request)
    if login is None:
        return None
    # A valid signature is not enough: the key may have been revoked since the cookie was set.
    with uow.unit_of_work(login.tenant_id) as session:
        return auth.viewer(session, login=login)


def require_viewer(request: Request) -> auth.Viewer:
    found = current_viewer(request)
    if found is None:
        raise NotSignedIn
    return found


def same_origin_form(request: Request) -> None:
    # SameSite=Strict guards the cookie, not the login itself: without this a foreign page
    # could sign a browser in with the attacker's key (login CSRF). Browsers that send no
    # Sec-Fetch-Site are old or non-browser clients, which cannot be driven by another site.
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise CrossSiteForm


ViewerDep = Annotated[auth.Viewer, Depends(require_viewer)]
SameOriginForm = Depends(same_origin_form)


# --- Officer and CSRF ------------------------------------------------------------------------
# Until staff sign-in lands, every compliance key signs in as an officer. These keep the names
# the pages use: `OfficerDep`, `CsrfDep` (on every POST), and `{{ csrf_field }}` in templates.

CSRF_FIELD = "csrf_token"


class CsrfRefused(CrossSiteForm):
    """A form post without this session's CSRF token: refused (403) like a cross-site one."""


def require_officer(viewer: ViewerDep) -> auth.Viewer:
    return viewer


def csrf_token(request: Request) -> str:
    """The token this session's forms carry: a keyed digest of the session cookie, so it is
    worthless in any other session and needs no storage."""
    cookie = request.cookies.get(console_session.COOKIE_NAME, "")
    key = get_runtime().secret_key.encode()
    return hmac.new(key, b"console-csrf:" + cookie.encode(), hashlib.sha256).hexdigest()


async def verify_csrf(request: Request) -> None:
    form = await request.form()
    sent = form.get(CSRF_FIELD)
    if not isinstance(sent, str) or not hmac.compare_digest(sent, csrf_token(request)):
        raise CsrfRefused


def _csrf_context(request: Request) -> dict[str, Any]:
    return {"csrf_token": csrf_token(request),
            "csrf_field": Markup('<input type="hidden" name="{}" value="{}">').format(
                CSRF_FIELD, csrf_token(request))}


OfficerDep = Annotated[auth.Viewer, Depends(require_officer)]
CsrfDep = Depends(verify_csrf)
templates.context_processors.append(_csrf_context)
