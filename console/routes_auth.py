"""Signing in and out of the console, and the page a signed-in officer lands on."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core import uow
from console import auth
from console import session as console_session
from console.deps import SameOriginForm, ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)

# Deliberately the same for app keys, unknown keys and revoked keys: the form must not tell
# a guesser which keys exist or what role they have.
SIGN_IN_REFUSED = "That key cannot sign in to the console."
# Real keys are ~60 characters; anything far longer is not worth hashing.
MAX_KEY_LENGTH = 512


def _redirect(request: Request, name: str) -> RedirectResponse:
    # A path, not an absolute URL: behind a TLS-terminating proxy the request scheme may differ
    # from what the browser sees.
    return RedirectResponse(request.url_for(name).path, status_code=status.HTTP_303_SEE_OTHER)


@router.get("/login", name="login_page", response_class=HTMLResponse)
def login_page(request: Request) -> Response:
    """Show the sign-in form."""
    return templates.TemplateResponse(request, "login.html", {"error": None})


@router.post("/login", name="login", dependencies=[SameOriginForm])
def login(request: Request, key: Annotated[str, Form()] = "") -> Response:
    """Sign in with a compliance key."""
    raw_key = key.strip()
    principal = None
    if raw_key and len(raw_key) <= MAX_KEY_LENGTH:
        with uow.unit_of_work() as session:
            principal = auth.sign_in(session, raw_key=raw_key)
    if principal is None:
        return templates.TemplateResponse(
            request,
            "login.html",
            {"error": SIGN_IN_REFUSED},
            status_code=status.HTTP_401_UNAUTHORIZED,
        )
    response = _redirect(request, "home")
    token = console_session.issue(tenant_id=principal.tenant_id, key_id=principal.key_id)
    console_session.set_cookie(response, request, token)
    return response


@router.post("/logout", name="logout", dependencies=[SameOriginForm])
def logout(request: Request) -> Response:
    """Sign out."""
    response = _redirect(request, "login_page")
    console_session.clear_cookie(response, request)
    return response


@router.get("/", name="home", response_class=HTMLResponse)
def home(request: Request, viewer: ViewerDep) -> Response:
    """The signed-in officer's start page."""
    return templates.TemplateResponse(request, "home.html", {"viewer": viewer})


def redirect_to_login(request: Request) -> Response:
    """What any page answers when nobody (valid) is signed in."""
    response = _redirect(request, "login_page")
    # A cookie that failed verification is useless; dropping it keeps the browser tidy.
    if console_session.COOKIE_NAME in request.cookies:
        console_session.clear_cookie(response, request)
    return response


__all__ = ["SIGN_IN_REFUSED", "redirect_to_login", "router"]
