"""Security headers on every console response, pages, redirects, errors and static files alike."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS = {
    # Pages load only their own stylesheet; no page may be framed (clickjacking).
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    # Console URLs may name tenants' subjects; they must not leak to other sites.
    "Referrer-Policy": "no-referrer",
    # Pages show regulated data: nothing may be kept in shared or back-button caches.
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


class SecurityHeadersMiddleware:
    """Pure ASGI rather than BaseHTTPMiddleware, so streaming and errors pass through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
