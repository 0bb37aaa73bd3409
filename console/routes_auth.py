"""Signing in and out of the console."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from app.core import uow
from app.staff import sign_in
from console import auth
from console import session as console_session
from console.deps import CsrfDep, SameOriginForm, current_viewer, verify_csrf
from console.templating import templates

router = APIRouter(include_in_schema=False)

# The same for an unknown email, a wrong password and a removed account: the form must not
# tell a guesser which emails have accounts.
SIGN_IN_REFUSED = "That email and password do not match an account."
LOCKED = ("Too many failed sign-ins for this email. Try again after {until} UTC, "
          "or ask an officer to check the account.")


def redirect(request: Request, name: str, **params: str) -> RedirectResponse:
    """A 303 to a console page by route name: a path, not an absolute URL, since behind a
    TLS-terminating proxy the request scheme may differ from what the browser sees."""
    return RedirectResponse(request.url_for(name, **params).path,
                            status_code=status.HTTP_303_SEE_OTHER)


@router.get("/login", name="login_page", response_class=HTMLResponse)
def login_page(request: Request) -> Response:
    """Show the sign-in form (a member already signed in goes on to the dashboard)."""
    if current_viewer(request) is not None:
        return redirect(request, "home")
    expired = request.query_params.get("expired") == "1"
    return templates.TemplateResponse(request, "login.html",
                                      {"error": None, "email": "", "expired": expired})


@router.post("/login", name="login", dependencies=[CsrfDep])
def login(request: Request, email: Annotated[str, Form(max_length=1000)] = "",
          password: Annotated[str, Form(max_length=2000)] = "") -> Response:
    """Sign in with a staff email and password."""
    result = sign_in.attempt(email=email, password=password)
    if result.staff is None:
        if result.delay_seconds:
            time.sleep(result.delay_seconds)
        message = SIGN_IN_REFUSED
        if result.locked_until is not None:
            message = LOCKED.format(until=result.locked_until.astimezone(UTC).strftime("%H:%M"))
        return templates.TemplateResponse(
            request, "login.html",
            {"error": message, "email": email.strip()[:254], "expired": False},
            status_code=(status.HTTP_429_TOO_MANY_REQUESTS if result.locked_until
                         else status.HTTP_401_UNAUTHORIZED),
        )
    staff = result.staff
    with uow.unit_of_work(staff.tenant_id) as session:
        timeout = auth.idle_timeout(session, tenant_id=staff.tenant_id)
    token = console_session.issue(tenant_id=staff.tenant_id, staff_id=staff.id,
                                  nonce=console_session.new_nonce(),
                                  generation=staff.session_generation,
                                  signed_in_at=datetime.now(UTC))
    response = redirect(request, "home")
    console_session.set_cookie(response, request, console_session.COOKIE_NAME, token,
                               max_age=int(timeout.total_seconds()))
    return response


@router.post("/logout", name="logout", dependencies=[SameOriginForm])
async def logout(request: Request) -> Response:
    """Sign out: the session ends on the server (audited when it was still live). A session
    that already ended has nothing to protect, so only a live one needs the CSRF token."""
    login = console_session.from_request(request)
    if login is not None:
        await verify_csrf(request)
        await run_in_threadpool(sign_in.signed_out, tenant_id=login.tenant_id,
                                staff_id=login.staff_id, generation=login.generation)
    response = redirect(request, "login_page")
    console_session.clear_cookie(response, request)
    return response


def redirect_to_login(request: Request) -> Response:
    """What any page answers when nobody (valid) is signed in."""
    had_cookie = console_session.COOKIE_NAME in request.cookies
    response = RedirectResponse(
        request.url_for("login_page").path + ("?expired=1" if had_cookie else ""),
        status_code=status.HTTP_303_SEE_OTHER)
    # A cookie that failed verification is useless; dropping it keeps the browser tidy.
    if had_cookie:
        console_session.clear_cookie(response, request)
    return response


__all__ = ["SIGN_IN_REFUSED", "redirect", "redirect_to_login", "router"]
