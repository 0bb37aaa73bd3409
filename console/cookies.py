"""Cookies that dependencies ask for (`session.set_later`), added to the final response."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import Scope

from console.headers import ResponseStartMiddleware
from console.session import pending_cookies


class PendingCookiesMiddleware(ResponseStartMiddleware):
    """Pages, redirects and errors alike get the cookies their request left pending."""

    def on_start(self, scope: Scope, headers: MutableHeaders) -> None:
        # A cookie the response sets itself (sign-in, sign-out) wins over a pending one.
        own = {value.split("=", 1)[0].strip() for value in headers.getlist("set-cookie")}
        for name, value in pending_cookies(scope.get("state", {})).items():
            if name not in own:
                headers.append("set-cookie", value.decode("latin-1"))
