"""The request's unit of work: `LetheRoute` wraps every API route in a `RequestWork`.

Authentication runs before it (one autocommit statement); the transaction opens when the
route's session dependency resolves, after the route's *prepare* dependency did the slow work
(embedding, a judge model), so a slow model never holds a connection. Opening it names the
tenant and claims the Idempotency-Key. After the route returns, the idempotency record is
written beside the effect and the transaction commits *before* the response leaves, so a 2xx
is durable; then the jobs the request enqueued are sent. Tasks use `app.core.uow.unit_of_work`.
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
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.api import access, admission
from app.core import db, jobs, replicas
from app.core.config import get_settings
from app.core.uow import begin
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
    # A `?subject=` the route takes: whom its answer is about, when the body does not say.
    subject: str | None = None


class RequestWork:
    """A request's unit of work: the caller, its key, its transaction and the jobs it asked for."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.tenant_id: uuid.UUID | None = None
        # Set by authentication (a key, or the admin token): the transaction opens only after.
        self.identified = False
        self.pending_key: PendingKey | None = None
        self.claim: idempotency.Claim | None = None
        self.api_key_id: Any = None
        self.jobs = jobs.JobQueue()
        # Applied to a response body before it is stored for replays (e.g. one-time secrets).
        self.redact: Callable[[Any], Any] | None = None
        # Memories the answer shows beyond its `id` (a batch's items): a forget of one of
        # them must find the stored answer to redact it.
        self.names: list[uuid.UUID] = []
        # Whom the answer is about, when neither the request nor the answer says `subject`
        # (a mem0 route's `user_id`): its stored copy is sealed under that subject's key.
        self.subject: str | None = None
        # A GET with replicas configured: its transaction may run on a replica that passed
        # the forget fence (app/core/replicas.py).
        self.on_replica = False

    @property
    def active(self) -> bool:
        """Something to commit or send: a read that never opened a transaction has not."""
        return self.session is not None or bool(self.jobs.jobs)

    def open(self) -> Session:
        """The request's transaction, scoped to its tenant; claims a pending key first.

        Called by the session dependency (app/api/deps.py), never by a route. Raises
        `ReplayResponse` when the key already has an answer.
        """
        if self.session is not None:
            return self.session
        if not self.identified:
            # A route that lists its session before its caller would open unauthenticated,
            # and before the Idempotency-Key is known.
            raise RuntimeError("the transaction opens after the caller is identified")
        tenant = {db.TENANT_GUC: str(self.tenant_id)} if self.tenant_id is not None else {}
        engine = None
        if self.on_replica and self.tenant_id is not None and self.pending_key is None:
            engine = replicas.choose(self.tenant_id)
        self.session = begin(engine or db.app_engine(), tenant)
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
        """Commit (roll back for an error answer), then send the enqueued jobs."""
        if response.status_code >= 400:
            self.rollback()
            return
        if self.session is not None:
            try:
                if self.claim is not None:
                    idempotency.record(
                        self.session,
                        self.claim,
                        api_key_id=self.api_key_id,
                        status=response.status_code,
                        body=self._stored_body(response),
                        headers=dict(response.headers), names=self.names,
                        subject=self._subject(),
                        retention=timedelta(days=get_settings().idempotency_retention_days),
                    )
                self.session.commit()
            except BaseException:
                self.session.rollback()
                raise
            finally:
                self.close()
        # Jobs are sent only once the transaction that asked for them is durable.
        self.jobs.send()

    def _stored_body(self, response: Response) -> Any:
        body = _json_body(response)
        return self.redact(body) if self.redact is not None else body

    def _subject(self) -> str | None:
        pending = self.pending_key
        return self.subject if self.subject is not None else (
            pending.subject if pending is not None else None)

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


def current(request: Request) -> RequestWork:
    work = getattr(request.state, "uow", None)
    if work is None:
        work = RequestWork()
        request.state.uow = work
    return work


# PostgreSQL's verdicts that the same transaction may well succeed when run again: a deadlock
# (it picked this request as the victim) or a serialization failure.
RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})
# A GET that writes after all, sent to a replica: it runs again on the primary.
READ_ONLY_SQLSTATE = "25006"
# The GETs a replica serves, once it has replayed the tenant's last forget (recall too, in its
# router): reads of memories, the bulk of read traffic. The rest (the state of jobs, erasures
# and exports a client polls right after filing them, settings, keys, holds, audit) read the
# primary, so a client reads its own writes there.
REPLICA_READ_PATHS = ("/v1/memories", "/compat/mem0/memories")
ATTEMPTS = 3


def retryable(exc: BaseException) -> bool:
    return _sqlstate(exc) in RETRYABLE_SQLSTATES


def _sqlstate(exc: BaseException) -> str | None:
    orig = getattr(exc, "orig", None) if isinstance(exc, DBAPIError) else None
    return getattr(orig, "sqlstate", None)


class LetheRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        declarations = access.declared(self.dependant)
        replica_reads = "GET" in (self.methods or set()) and self.path_format.startswith(
            REPLICA_READ_PATHS)

        async def route_handler(request: Request) -> Response:
            # Admitted before its first thread is taken, until its commit is done.
            async with admission.slot():
                return await attempts(request)

        async def attempts(request: Request) -> Response:
            on_replica = (replica_reads and request.method == "GET" and replicas.configured()
                          and get_settings().replica_gets)
            for attempt in range(1, ATTEMPTS + 1):
                # Each attempt is a new unit of work: nothing of a rolled-back one survives.
                work = request.state.uow = RequestWork()
                work.on_replica = on_replica
                try:
                    with jobs.collecting(work.jobs):
                        response = await handler(request)
                except RequestValidationError:
                    if work.session is not None:
                        await run_in_threadpool(work.rollback)
                    # Authenticate before validating: a caller without a working key, or
                    # of the wrong role, gets its 401 or 403, not a description of the body.
                    for declaration in declarations:
                        if declaration.check is not None:
                            await declaration.check(request)
                    raise
                except ReplayResponse as replay:
                    await run_in_threadpool(work.rollback)
                    return _replayed(replay.replay)
                except BaseException as exc:
                    if work.session is not None:
                        await run_in_threadpool(work.rollback)
                    if (work.on_replica and attempt < ATTEMPTS
                            and _sqlstate(exc) == READ_ONLY_SQLSTATE):
                        on_replica = False
                        continue
                    if attempt < ATTEMPTS and retryable(exc):
                        # The victim of a deadlock with another transaction (say an ingestion
                        # holding the tenant's audit chain) runs again instead of failing.
                        # The route's template: a path can name a session or a key.
                        log.info("retrying %s %s after %s", request.method, self.path_format,
                                 type(exc).__name__)
                        continue
                    raise
                if work.active:
                    await run_in_threadpool(work.finish, response)
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
