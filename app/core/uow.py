"""The request's unit of work: one transaction, committed only after the route succeeded.

`LetheRoute` wraps every API route. Authentication runs in its own short transaction; the
work transaction opens lazily on first use (`open()`), so a route can do slow work such as
embedding text before it holds a connection. Opening it names the tenant and claims the
Idempotency-Key. After the route returns, the idempotency record is written beside the effect
and the transaction commits *before* the response leaves, so a 2xx is durable.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.core import db
from app.core.config import get_settings
from app.idempotency import service as idempotency

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PendingKey:
    """An Idempotency-Key to claim when the work transaction opens."""

    tenant_id: uuid.UUID
    key: str
    method: str
    path: str
    body: bytes
    kind: str


class UnitOfWork:
    def __init__(self) -> None:
        self.session: Session | None = None
        self.tenant_id: uuid.UUID | None = None
        self.pending_key: PendingKey | None = None
        self.claim: idempotency.Claim | None = None
        self.api_key_id: Any = None
        self.after_commit: list[Callable[[], None]] = []
        # Applied to a response body before it is stored for replays (e.g. one-time secrets).
        self.redact: Callable[[Any], Any] | None = None
        # Set by a route that creates its own operation row (an accepted job): answer into it.
        self.operation_id: uuid.UUID | None = None

    def open(self) -> Session:
        """The request's transaction, scoped to its tenant; claims a pending key first.

        Raises `ReplayResponse` when the key already has an answer.
        """
        if self.session is not None:
            return self.session
        self.session = Session(db.app_engine(), expire_on_commit=False)
        self.session.begin()
        if self.tenant_id is not None:
            db.set_tenant(self.session, self.tenant_id)
        pending = self.pending_key
        if pending is not None:
            outcome = idempotency.claim(
                self.session, tenant_id=pending.tenant_id, key=pending.key,
                method=pending.method, path=pending.path, body=pending.body, kind=pending.kind,
            )
            if isinstance(outcome, idempotency.Replay):
                raise ReplayResponse(outcome)
            self.claim = outcome
        return self.session

    def finish(self, response: Response) -> None:
        if self.session is None:
            return
        try:
            if response.status_code >= 400:
                self.session.rollback()
                return
            if self.claim is not None:
                idempotency.record(
                    self.session,
                    self.claim,
                    api_key_id=self.api_key_id,
                    status=response.status_code,
                    body=self._stored_body(response),
                    headers=dict(response.headers),
                    retention=timedelta(days=get_settings().idempotency_retention_days),
                    operation_id=self.operation_id,
                )
            self.session.commit()
        except BaseException:
            self.session.rollback()
            raise
        finally:
            self.close()
        # Jobs are sent only once the transaction that asked for them is durable.
        for send in self.after_commit:
            send()

    def _stored_body(self, response: Response) -> Any:
        body = _json_body(response)
        return self.redact(body) if self.redact is not None else body

    def rollback(self) -> None:
        if self.session is not None:
            try:
                self.session.rollback()
            finally:
                self.close()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


class ReplayResponse(Exception):
    """Raised by the idempotency dependency to short-circuit with the stored answer."""

    def __init__(self, replay: idempotency.Replay) -> None:
        self.replay = replay


def current(request: Request) -> UnitOfWork:
    uow = getattr(request.state, "uow", None)
    if uow is None:
        uow = UnitOfWork()
        request.state.uow = uow
    return uow


# PostgreSQL's verdicts that the same transaction may well succeed when run again: a deadlock
# (it picked this request as the victim) or a serialization failure.
RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})
ATTEMPTS = 3


def retryable(exc: BaseException) -> bool:
    orig = getattr(exc, "orig", None) if isinstance(exc, DBAPIError) else None
    return getattr(orig, "sqlstate", None) in RETRYABLE_SQLSTATES


class LetheRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route_handler(request: Request) -> Response:
            for attempt in range(1, ATTEMPTS + 1):
                # Each attempt is a new unit of work: nothing of a rolled-back one survives.
                uow = request.state.uow = UnitOfWork()
                try:
                    response = await handler(request)
                except ReplayResponse as replay:
                    await run_in_threadpool(uow.rollback)
                    return _replayed(replay.replay)
                except BaseException as exc:
                    if uow.session is not None:
                        await run_in_threadpool(uow.rollback)
                    if attempt < ATTEMPTS and retryable(exc):
                        # The victim of a deadlock with another transaction (say an ingestion
                        # holding the tenant's audit chain) runs again instead of failing.
                        log.info("retrying %s %s after %s", request.method, request.url.path,
                                 type(exc).__name__)
                        continue
                    raise
                if uow.session is not None:  # a read that never opened it has nothing to do
                    await run_in_threadpool(uow.finish, response)
                return response
            raise AssertionError("unreachable: the last attempt returns or raises")

        return route_handler


def _json_body(response: Response) -> Any:
    body = getattr(response, "body", b"")
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def _replayed(replay: idempotency.Replay) -> Response:
    headers = {**replay.headers, idempotency.REPLAYED_HEADER: "true"}
    if replay.body is None:
        return Response(status_code=replay.status, headers=headers)
    return JSONResponse(replay.body, status_code=replay.status, headers=headers)
