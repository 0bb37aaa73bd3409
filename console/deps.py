"""Request dependencies shared by console pages.

- ``ViewerDep``: any signed-in staff member (officer or viewer); nobody → the sign-in page.
- ``OfficerDep``: an officer; a viewer gets 403. Use it on every POST that changes anything.
- ``CsrfDep``: the form's ``csrf_token`` must match the session; put it on every POST
  (``dependencies=[CsrfDep]``). Templates add the hidden field with ``{{ csrf_field }}``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core import uow
from console import auth, csrf
from console import session as console_session


class NotSignedIn(Exception):
    """Raised by `require_viewer`; the console answers it with a redirect to the login page."""


class NotAnOfficer(Exception):
    """A viewer tried to change something: 403."""


class CsrfRefused(Exception):
    """A form without this session's CSRF token: 403."""


class CrossSiteForm(Exception):
    """A form posted from another site: 403, before anything else is looked at."""


def current_viewer(request: Request) -> auth.Viewer | None:
    login = console_session.from_request(request)
    if login is None:
        return None
    # A valid signature is not enough: the member may have been removed since, or the
    # session sat idle past what the tenant allows.
    with uow.unit_of_work(login.tenant_id) as session:
        found = auth.viewer(session, login=login)
    if found is not None:
        # Activity renews the session: its signature's timestamp is the last activity.
        console_session.set_later(
            request, console_session.COOKIE_NAME, console_session.renew(login),
            max_age=int(found.idle_timeout.total_seconds()),
        )
    return found


def require_viewer(request: Request) -> auth.Viewer:
    found = getattr(request.state, "console_viewer", None)
    if isinstance(found, auth.Viewer):
        return found
    found = current_viewer(request)
    if found is None:
        raise NotSignedIn
    request.state.console_viewer = found
    return found


def require_officer(viewer: Annotated[auth.Viewer, Depends(require_viewer)]) -> auth.Viewer:
    if not viewer.is_officer:
        raise NotAnOfficer
    return viewer


def same_origin_form(request: Request) -> None:
    # Browsers that send no Sec-Fetch-Site are old or non-browser clients, which cannot be
    # driven by another site; the CSRF token still has to match.
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise CrossSiteForm


async def verify_csrf(request: Request) -> None:
    same_origin_form(request)
    presented = request.headers.get(csrf.HEADER)
    if presented is None:
        # Starlette keeps the parsed form on the request, so the page's Form() fields reuse it.
        value = (await request.form()).get(csrf.FIELD)
        presented = value if isinstance(value, str) else None
    if not csrf.is_valid(request, presented):
        raise CsrfRefused


ViewerDep = Annotated[auth.Viewer, Depends(require_viewer)]
OfficerDep = Annotated[auth.Viewer, Depends(require_officer)]
CsrfDep = Depends(verify_csrf)
# The old name of the origin check alone; CsrfDep includes it.
SameOriginForm = Depends(same_origin_form)
