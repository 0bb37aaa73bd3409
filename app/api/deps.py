"""Request dependencies: who is calling, in which tenant, under which idempotency key, and
the request's transaction (`SessionDep`), which a route lists after its caller and after any
prepare step, so it opens only once both are done.
"""

import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.api import access, route
from app.core import db, security
from app.core.errors import Forbidden, Unauthorized
from app.core.runtime import get_runtime
from app.idempotency import service as idempotency
from app.limits import service as limits
from app.tenants import service as tenants
from app.tenants.models import Role
from app.tenants.service import Principal

bearer = HTTPBearer(auto_error=False, description="An API key, or the admin token.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
KEY_PATTERN = r"^[\x20-\x7E]+$"
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def get_session(request: Request) -> Session:
    """The request's transaction, opened now (claiming its Idempotency-Key)."""
    return route.current(request).open()


SessionDep = Annotated[Session, Depends(get_session)]


def get_claim(request: Request, _: SessionDep) -> idempotency.Claim | None:
    """The Idempotency-Key this request holds, once its transaction has claimed it."""
    return route.current(request).claim


ClaimDep = Annotated[idempotency.Claim | None, Depends(get_claim)]


def derived_id(kind: str) -> Callable[..., uuid.UUID | None]:
    """A dependency: the ID a create of ``kind`` gets from the request's Idempotency-Key, so
    a redelivery long after its record expired lands on the same ID; None without a key."""

    def dependency(claim: ClaimDep) -> uuid.UUID | None:
        return claim.derived_id(kind) if claim is not None else None

    return dependency


def _authenticate(raw_key: str) -> Principal | None:
    with db.autocommit() as conn:
        return tenants.authenticate_alone(conn, raw_key=raw_key)


def identify(
    work: route.RequestWork, credentials: HTTPAuthorizationCredentials | None
) -> Principal:
    """The caller's key, recorded on the request's unit of work; 401 when it is missing,
    unknown or revoked; 429 past the key's rate. Blocking (one query): from a worker
    thread."""
    if credentials is None:
        raise Unauthorized("Send `Authorization: Bearer <key>`.")
    found = _authenticate(credentials.credentials)
    if found is None:
        raise Unauthorized("Unknown or revoked key.")
    limits.admit(tenant_id=found.tenant_id, key_id=found.key_id)
    _record(work, found)
    return found


def _record(work: route.RequestWork, principal: Principal) -> None:
    work.tenant_id = principal.tenant_id
    work.api_key_id = principal.key_id
    work.identified = True


def require_role(principal: Principal, role: Role) -> Principal:
    """403 unless the key may act as ``role`` (a compliance key may do what an app key may)."""
    if role is Role.compliance and principal.role is not Role.compliance:
        raise Forbidden("This needs a compliance key.")
    return principal


async def caller(request: Request, credentials: HTTPAuthorizationCredentials | None
                 ) -> Principal:
    """The request's key, looked up once per request (a retried attempt reuses it)."""
    known = getattr(request.state, "principal", None)
    if isinstance(known, Principal):
        _record(route.current(request), known)
        return known
    found = await run_in_threadpool(identify, route.current(request), credentials)
    request.state.principal = found
    return found


async def _principal(request: Request, credentials: Credentials) -> Principal:
    return await caller(request, credentials)


def _key_header(description: str) -> Any:
    """The one rule for an Idempotency-Key, wherever a route takes one: 1 to 255 printable
    ASCII characters, else 422 `validation-error`."""
    return Header(alias="Idempotency-Key", description=description, min_length=1,
                  max_length=255, pattern=KEY_PATTERN)


IdempotencyKeyHeader = Annotated[str | None, _key_header(
    "1 to 255 printable characters; replays the first answer to this request.")]
RequiredKeyHeader = Annotated[str, _key_header(
    "Required: 1 to 255 printable characters; names this operation.")]
ReadKeyHeader = Annotated[str | None, _key_header(
    "1 to 255 printable characters, checked as on every POST; this read stores no answer, "
    "so nothing is replayed.")]


async def read_key(idempotency_key: ReadKeyHeader = None) -> None:
    """A dependency of a read sent as a POST (recall, search): it keeps no record of a key,
    but refuses one that every other POST refuses."""


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
    endpoint = request.scope.get("route")
    route.current(request).pending_key = route.PendingKey(
        tenant_id=tenant_id,  # type: ignore[arg-type]
        key=key,
        method=request.method,
        path=request.url.path,
        body=await request.body(),
        kind=getattr(endpoint, "name", None) or request.url.path,
        subject=request.query_params.get("subject"),
    )


def role_check(role: Role) -> Callable[[Request], Awaitable[None]]:
    """Authenticate and authorize a request for ``role`` from its headers alone."""

    async def check(request: Request) -> None:
        require_role(await caller(request, await bearer(request)), role)

    return check


def _requires(role: Role, *, mutating: bool) -> Callable[..., Awaitable[Principal]]:
    source = _idempotent if mutating else _principal

    async def dependency(principal: Annotated[Principal, Depends(source)]) -> Principal:
        return require_role(principal, role)

    return access.declare(dependency, access.Access(role.value), role_check(role))


def checked_inside(role: Role) -> Callable[[], None]:
    """A dependency that only declares ``role``, for a route that checks the key itself
    (recall checks it while its query embeds)."""

    def declaration() -> None:
        return None

    return access.declare(declaration, access.Access(role.value), role_check(role))


AppReader = Annotated[Principal, Depends(_requires(Role.app, mutating=False))]
AppWriter = Annotated[Principal, Depends(_requires(Role.app, mutating=True))]
ComplianceReader = Annotated[Principal, Depends(_requires(Role.compliance, mutating=False))]
ComplianceWriter = Annotated[Principal, Depends(_requires(Role.compliance, mutating=True))]


def _admin(request: Request, credentials: Credentials) -> None:
    if credentials is None:
        raise Unauthorized("This needs the admin token.")
    if not security.same_secret(credentials.credentials, get_runtime().admin_token):
        if _authenticate(credentials.credentials) is not None:
            # A working key of a tenant: known, but of a role that may not do this.
            raise Forbidden("This needs the admin token, not a tenant's key.")
        raise Unauthorized("This needs the admin token.")
    route.current(request).identified = True


async def _admin_check(request: Request) -> None:
    await run_in_threadpool(_admin, request, await bearer(request))


access.declare(_admin, access.Access.admin, _admin_check)


AdminDep = Annotated[None, Depends(_admin)]


async def _new_tenant_id(
    request: Request, _: AdminDep, idempotency_key: IdempotencyKeyHeader = None
) -> uuid.UUID | None:
    # No tenant exists yet to scope the key to, so the key names the tenant it creates.
    if idempotency_key is None:
        return None
    tenant_id = idempotency.derive_id(idempotency.ID_NAMESPACE, idempotency_key, "tenant")
    route.current(request).tenant_id = tenant_id
    await expect_key(request, tenant_id, idempotency_key)
    return tenant_id


NewTenantId = Annotated[uuid.UUID | None, Depends(_new_tenant_id)]
"""Admin only: the ID the tenant this request creates gets from its Idempotency-Key."""


def not_replayed(*fields: str) -> Callable[[Request], None]:
    """A dependency: ``fields`` of the answer (one-time secrets) are never stored for replays;
    a replay answers them as null."""

    def blank(body: Any) -> Any:
        return {**body, **dict.fromkeys(fields)} if isinstance(body, dict) else body

    def dependency(request: Request) -> None:
        route.current(request).redact = blank

    return dependency
