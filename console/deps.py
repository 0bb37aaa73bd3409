"""Request dependencies shared by console pages."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core import uow
from console import auth
from console import session as console_session


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
