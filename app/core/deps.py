"""Request dependencies: who is calling, in which tenant, and under which idempotency key.

This is the single place that turns a request into a tenant-scoped unit of work.
"""

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.core import db, security, uow
from app.core.errors import Forbidden, Unauthorized
from app.core.runtime import get_runtime
from app.idempotency import service as idempotency
from app.tenants import service as tenants
from app.tenants.models import Role
from app.tenants.service import Principal

bearer = HTTPBearer(auto_error=False, description="An API key, or the admin token.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
KEY_PATTERN = r"^[\x20-\x7E]+$"
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def get_work(request: Request) -> uow.UnitOfWork:
    return uow.current(request)


def get_session(request: Request) -> Session:
    return uow.current(request).open()


WorkDep = Annotated[uow.UnitOfWork, Depends(get_work)]
SessionDep = Annotated[Session, Depends(get_session)]


def _authenticate(raw_key: str) -> Principal | None:
    with db.autocommit() as conn:
        return tenants.authenticate_alone(conn, raw_key=raw_key)


def identify(work: uow.UnitOfWork, credentials: HTTPAuthorizationCredentials | None) -> Principal:
    """The caller's key, recorded on the request's unit of work; 401 when it is missing,
    unknown or revoked. Blocking (one query): from a worker thread."""
    if credentials is None:
        raise Unauthorized("Send `Authorization: Bearer <key>`.")
    found = _authenticate(credentials.credentials)
    if found is None:
        raise Unauthorized("Unknown or revoked key.")
    work.tenant_id = found.tenant_id
    work.api_key_id = found.key_id
    return found


def require_role(principal: Principal, role: Role) -> Principal:
    """403 unless the key may act as ``role`` (a compliance key may do what an app key may)."""
    if role is Role.compliance and principal.role is not Role.compliance:
        raise Forbidden("This needs a compliance key.")
    return principal


async def _principal(request: Request, credentials: Credentials) -> Principal:
    return await run_in_threadpool(identify, uow.current(request), credentials)


IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="1 to 255 printable characters; replays the first answer to this request.",
        min_length=1,
        max_length=255,
        pattern=KEY_PATTERN,
    ),
]


RequiredKeyHeader = Annotated[
    str,
    Header(
        alias="Idempotency-Key",
        description="Required: 1 to 255 printable characters; names this operation.",
        min_length=1,
        max_length=255,
        pattern=KEY_PATTERN,
    ),
]


async def _idempotent(
    request: Request,
    principal: Annotated[Principal, Depends(_principal)],
    idempotency_key: IdempotencyKeyHeader = None,
) -> Principal:
    if idempotency_key is not None and request.method in MUTATING:
        await expect_key(request, principal.tenant_id, idempotency_key)
    return principal


async def expect_key(request: Request, tenant_id: object, key: str) -> None:
    """Have the work transaction claim ``key`` (or replay its answer) when it opens."""
    idempotency.validate_key(key)
    route = request.scope.get("route")
    uow.current(request).pending_key = uow.PendingKey(
        tenant_id=tenant_id,  # type: ignore[arg-type]
        key=key,
        method=request.method,
        path=request.url.path,
        body=await request.body(),
        kind=getattr(route, "name", None) or request.url.path,
    )


def _requires(role: Role, *, mutating: bool) -> Callable[..., Awaitable[Principal]]:
    source = _idempotent if mutating else _principal

    async def dependency(principal: Annotated[Principal, Depends(source)]) -> Principal:
        return require_role(principal, role)

    return dependency


AppReader = Annotated[Principal, Depends(_requires(Role.app, mutating=False))]
AppWriter = Annotated[Principal, Depends(_requires(Role.app, mutating=True))]
ComplianceReader = Annotated[Principal, Depends(_requires(Role.compliance, mutating=False))]
ComplianceWriter = Annotated[Principal, Depends(_requires(Role.compliance, mutating=True))]


def _admin(credentials: Credentials) -> None:
    if credentials is None or not security.same_secret(
        credentials.credentials, get_runtime().admin_token
    ):
        raise Unauthorized("This needs the admin token.")


AdminDep = Annotated[None, Depends(_admin)]
