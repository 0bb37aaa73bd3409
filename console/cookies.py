"""Cookies that dependencies ask for (`session.set_later`), added to the final response."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class PendingCookiesMiddleware:
    """Pure ASGI, like the headers middleware: pages, redirects and errors alike."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from console.session import pending_cookies

        async def send_with_cookies(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                # A cookie the response sets itself (sign-in, sign-out) wins over a pending one.
                own = {value.split(b"=", 1)[0].strip() for name, value in headers
                       if name.lower() == b"set-cookie"}
                for cookie_name, value in pending_cookies(scope.get("state", {})).items():
                    if cookie_name.encode() not in own:
                        headers.append((b"set-cookie", value))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_cookies)
