"""Structured logs: one JSON object a line, each naming the request it belongs to.

`RequestIdMiddleware` gives every request an ID (the caller's `X-Request-ID` when it is a
sane token, else a new one), returns it as `X-Request-ID` and logs one line per request with
method, route, status and duration. Lines never carry bodies, paths or query strings: those
hold memory text, subjects and sources. uvicorn's own access line (raw path and query string)
is switched off, whatever uvicorn was told.

What a line says is limited for the same reason (docs/decisions.md, "Log lines name no
subject"): an exception appears as its type, its frames and, for a database error, its SQLSTATE
and constraint, never its message (psycopg's carries the DETAIL `Key (...)=(...)`, SQLAlchemy's
the statement's parameters); an exception passed as an argument appears as its type name; and
Celery's task lines show neither the error's text nor a return value other than a count, a
flag or a status word.
"""

from __future__ import annotations

import json
import logging
import re
import time
import traceback
import uuid
from collections.abc import Mapping
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
            "message": message(record),
        }
        current = request_id.get()
        if current is not None:
            line["request_id"] = current
        line.update(getattr(record, "fields", {}))
        if record.exc_info and record.exc_info[1] is not None:
            line["error"] = safe_traceback(record.exc_info[1])
        return json.dumps(line, default=str)


# A Celery return value shown as is: a count, a flag, nothing, or a status word.
PLAIN_RESULT = re.compile(r"^(None|True|False|-?\d+|'[a-z_]{1,32}')$")
HIDDEN = "(hidden)"


def message(record: logging.LogRecord) -> str:
    """The record's message with its arguments made safe: an exception as its type name, and
    in Celery's task lines (arguments by name) the error's text and the task's arguments and
    return value hidden."""
    args: Any = record.args
    if isinstance(args, Mapping):
        error = record.exc_info[1] if record.exc_info else None
        args = {name: _named_argument(name, value, error) for name, value in args.items()}
    elif isinstance(args, tuple):
        args = tuple(type(arg).__name__ if isinstance(arg, BaseException) else arg
                     for arg in args)
    text = str(record.msg)
    return text % args if args else text


def _named_argument(name: str, value: Any, error: BaseException | None) -> Any:
    if isinstance(value, BaseException):
        return type(value).__name__
    if name == "exc":
        return type(error).__name__ if error is not None else HIDDEN
    if name == "return_value":
        return value if PLAIN_RESULT.match(str(value)) else HIDDEN
    if name in ("args", "kwargs", "traceback"):
        return HIDDEN
    return value


def safe_traceback(error: BaseException) -> str:
    """Python's traceback of ``error`` and its causes, each exception named but not quoted."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__
                                        else current.__context__)
    return "\n\nThe above exception led to:\n\n".join(
        "Traceback (most recent call last):\n"
        + "".join(traceback.format_list(traceback.extract_tb(each.__traceback__)))
        + describe(each)
        for each in reversed(chain))


def describe(error: BaseException) -> str:
    """The exception's type, with what identifies a database error without quoting values."""
    kind = type(error)
    name = kind.__qualname__ if kind.__module__ == "builtins" else (
        f"{kind.__module__}.{kind.__qualname__}")
    facts = []
    sqlstate = getattr(error, "sqlstate", None)
    if isinstance(sqlstate, str):
        facts.append(f"sqlstate {sqlstate}")
    diag = getattr(error, "diag", None)
    for label in ("constraint_name", "table_name", "column_name"):
        value = getattr(diag, label, None) if diag is not None else None
        if isinstance(value, str):
            facts.append(f"{label.removesuffix('_name')} {value}")
    if isinstance(error, OSError) and error.errno is not None:
        facts.append(f"errno {error.errno}")
    return name + (f" ({', '.join(facts)})" if facts else "")


def configure(level: int = logging.INFO, logfile: str | None = None) -> None:
    """JSON lines on stderr (or appended to ``logfile``) for the whole process (API, worker,
    beat), uvicorn's loggers included; left alone when the root logger already has a handler
    (a test runner, or a host that configured it), except that uvicorn's access line is off
    either way."""
    access = logging.getLogger("uvicorn.access")
    # Its line is the raw path and query string (`?subject=`, `?user_id=`, `&q=`), and
    # `lethe.request` already logs each request by its route template.
    access.handlers[:] = []
    access.propagate = False
    access.disabled = True
    root = logging.getLogger()
    if root.handlers:
        return
    handler: logging.Handler = (logging.FileHandler(logfile, encoding="utf-8") if logfile
                                else logging.StreamHandler())
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
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
