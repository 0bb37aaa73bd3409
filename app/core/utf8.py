"""Refuse a request whose percent-decoded path or query string is not UTF-8.

Starlette decodes both with replacement characters, so `?subject=%FF%FE` would silently look
for a subject named "\ufffd\ufffd" and answer 200; the caller sent text that means nothing.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.errors import problem_response


def is_utf8(raw: bytes) -> bool:
    try:
        unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class Utf8Middleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw_path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "replace")
            if not (is_utf8(scope.get("query_string", b"")) and is_utf8(raw_path)):
                response = problem_response(
                    422, "validation-error", "The request is not valid",
                    "The path and query string must be percent-encoded UTF-8.",
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
