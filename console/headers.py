"""Security headers on every console response, pages, redirects, errors and static files alike."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS = {
    # Pages load only their own files (no inline script or style, so no 'unsafe-inline');
    # forms post only here; no page may be framed (clickjacking).
    "Content-Security-Policy": (
        "default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    # Console URLs may name tenants' subjects; they must not leak to other sites.
    "Referrer-Policy": "no-referrer",
    # Pages show regulated data: nothing may be kept in shared or back-button caches.
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


class ResponseStartMiddleware:
    """Pure ASGI rather than BaseHTTPMiddleware, so streaming and errors pass through
    untouched; subclasses change the headers of every response as it starts."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def on_start(self, scope: Scope, headers: MutableHeaders) -> None:
        raise NotImplementedError

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.on_start(scope, MutableHeaders(scope=message))
            await send(message)

        await self.app(scope, receive, send_with_headers)


class SecurityHeadersMiddleware(ResponseStartMiddleware):
    def on_start(self, scope: Scope, headers: MutableHeaders) -> None:
        for name, value in SECURITY_HEADERS.items():
            headers[name] = value
