"""Structured logs: one JSON object a line, each naming the request it belongs to.

`RequestIdMiddleware` gives every request an ID (the caller's `X-Request-ID` when it is a
sane token, else a new one), returns it as `X-Request-ID` and logs one line per request with
method, route, status and duration. Lines never carry bodies or query strings: those hold
memory text and subjects.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core import metrics

HEADER = "X-Request-ID"
SANE_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
access_log = logging.getLogger("lethe.request")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        current = request_id.get()
        if current is not None:
            line["request_id"] = current
        line.update(getattr(record, "fields", {}))
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure(level: int = logging.INFO) -> None:
    """JSON lines on stderr for the whole process, uvicorn's loggers included; left alone when
    the root logger already has a handler (a test runner, or a host that configured it)."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


def incoming_id(scope: Scope) -> str:
    for name, value in scope.get("headers") or []:
        if name == b"x-request-id":
            candidate = value.decode("latin-1")
            if SANE_ID.match(candidate):
                return candidate
    return uuid.uuid4().hex


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = incoming_id(scope)
        token = request_id.set(rid)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", []),
                                      (HEADER.lower().encode(), rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            # The route's template, not the path: paths name subjects and sessions.
            template = getattr(route, "path_format", None) or getattr(route, "path", None)
            seconds = time.perf_counter() - started
            access_log.info("request", extra={"fields": {
                "method": scope.get("method"), "route": template, "status": status,
                "duration_ms": round(seconds * 1000, 2),
            }})
            metrics.observe_request(route=template, method=scope.get("method"), status=status,
                                    seconds=seconds)
            request_id.reset(token)
