from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import AwareDatetime

from app.api import route
from app.api.deps import AppReader, AppWriter, SessionDep, derived_id
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, InvalidRequest, problem_responses
from app.core.models import utcnow
from app.forgetting import forget_requests
from app.memories import queries, service
from app.memories.models import MemoryState, Volatility
from app.memories.schemas import (
    ForgetRequestHandled,
    Lineage,
    MemoryCreate,
    MemoryPage,
    MemoryPatch,
    MemoryPublic,
    MemoryWritten,
    PromoteBody,
    RedactedAnswer,
    RevertBody,
    VersionList,
)

router = APIRouter(
    prefix="/v1/memories", tags=["memories"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)
ETAG = {"ETag": {"description": 'The revision, e.g. `"3"`: send it back as If-Match.',
                 "schema": {"type": "string"}}}
EDIT_PROBLEMS = {200: {"headers": ETAG}, **problem_responses(412, 428)}
NO_NUL = r"^[^\x00]*$"
# Required, as docs/api.md says; a request without it is answered 428, not 422
# (app/core/errors.py).
IfMatch = Annotated[
    str,
    Header(alias="If-Match", description='The ETag last read, e.g. `"3"`; required (428).'),
]


def _known_query(request: Request) -> None:
    unknown = sorted(set(request.query_params) - LIST_PARAMS)
    if unknown:
        # A misspelt filter silently ignored would list more than the caller meant.
        raise InvalidRequest("Unknown query parameters: " + ", ".join(unknown[:5]))


LIST_PARAMS = frozenset({"subject", "state", "key", "source", "limit", "cursor"})


def _etag(response: Response, revision: int) -> None:
    response.headers["ETag"] = f'"{revision}"'


def _prepared_write(body: MemoryCreate, principal: AppWriter) -> forget_requests.PreparedRemember:
    return forget_requests.prepare(tenant_id=principal.tenant_id, body=body,
                                   actor=audit.actor_for(principal))


# Dependencies resolve in the order a route lists them: the prepare step, then the session.
PreparedWrite = Annotated[forget_requests.PreparedRemember, Depends(_prepared_write)]
CreatedId = Annotated[uuid.UUID | None, Depends(derived_id("memory"))]


@router.post("", status_code=201, response_model=MemoryWritten | RedactedAnswer,
             responses={200: {"model": MemoryWritten | ForgetRequestHandled | RedactedAnswer,
                              "description": "A slot's new version; or, when the tenant "
                              "detects forget requests and the text is one, what it forgot "
                              "(nothing is stored)",
                              "headers": ETAG},
                        201: {"headers": ETAG, "description": "The memory; a replay of "
                              "a create since forgotten answers `{\"id\", \"state\"}` only "
                              "(`RedactedAnswer`)"},
                        **problem_responses(412)})
def remember(body: MemoryCreate, principal: AppWriter, prepared: PreparedWrite,
             session: SessionDep, memory_id: CreatedId, response: Response) -> Any:
    """Remember a fact (a slot write with the same subject and key adds a version)."""
    written = forget_requests.remember(session, tenant_id=principal.tenant_id, prepared=prepared,
                                       actor=audit.actor_for(principal), memory_id=memory_id)
    if isinstance(written, ForgetRequestHandled):
        return JSONResponse(written.model_dump(mode="json"), status_code=200)
    if written.memory is None:
        return JSONResponse({"id": str(written.forgotten_id), "state": "forgotten"},
                            status_code=201)
    response.status_code = 201 if written.created else 200
    _etag(response, written.memory.revision)
    response.headers["Location"] = f"/v1/memories/{written.memory.id}"
    return written.memory


@router.get("", dependencies=[Depends(_known_query)])
def list_memories(
    principal: AppReader,
    session: SessionDep,
    subject: Annotated[str | None, Query(max_length=255, pattern=NO_NUL)] = None,
    state: MemoryState | None = None,
    key: Annotated[str | None, Query(max_length=255, pattern=NO_NUL)] = None,
    source: Annotated[str | None, Query(max_length=255, pattern=NO_NUL)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> MemoryPage:
    """List memories oldest first; forgotten ones never appear."""
    filters = queries.Filters(subject=subject, state=state, key=key, source=source)
    return queries.page(session, tenant_id=principal.tenant_id, filters=filters, limit=limit,
                        cursor=cursor)


@router.get("/{memory_id}", responses={200: {"headers": ETAG}})
def read_memory(
    memory_id: uuid.UUID, principal: AppReader, session: SessionDep, response: Response,
    as_of: Annotated[AwareDatetime | None, Query(
        description="The memory as it stood at that instant (its version, state, flags and "
        "expiry then); 404 if it did not exist yet. A forgotten memory is 404 at any "
        "instant.")] = None,
) -> MemoryPublic:
    """Read a memory; its ETag is its revision."""
    if as_of is not None:
        # A past state is not something to compare-and-set against: no ETag.
        return queries.get_then(session, tenant_id=principal.tenant_id, memory_id=memory_id,
                                at=min(as_of, utcnow()))
    memory = queries.get(session, tenant_id=principal.tenant_id, memory_id=memory_id)
    _etag(response, memory.revision)
    return memory


def _prepared_patch(body: MemoryPatch) -> service.PreparedPatch:
    return service.prepare_patch(body)


PreparedPatch = Annotated[service.PreparedPatch, Depends(_prepared_patch)]


@router.patch("/{memory_id}", responses=EDIT_PROBLEMS)
def correct_memory(
    memory_id: uuid.UUID, body: MemoryPatch, principal: AppWriter, prepared: PreparedPatch,
    session: SessionDep, response: Response, if_match: IfMatch,
) -> MemoryWritten | RedactedAnswer:
    """Correct a memory (If-Match required); new text appends a version."""
    memory = service.update(session, tenant_id=principal.tenant_id, memory_id=memory_id,
                            if_match=if_match, patch=prepared.patch,
                            embedding=prepared.embedding, actor=audit.actor_for(principal))
    _etag(response, memory.revision)
    return memory


@router.post("/{memory_id}/revert", responses=EDIT_PROBLEMS)
def revert_memory(
    memory_id: uuid.UUID, body: RevertBody, principal: AppWriter, session: SessionDep,
    response: Response, if_match: IfMatch,
) -> MemoryWritten | RedactedAnswer:
    """Point a memory at one of its earlier versions again (If-Match required)."""
    memory = service.revert(session, tenant_id=principal.tenant_id, memory_id=memory_id,
                            if_match=if_match, seq=body.seq,
                            actor=audit.actor_for(principal))
    _etag(response, memory.revision)
    return memory


@router.post("/{memory_id}/promote", responses={**problem_responses(412),
                                               200: {"headers": ETAG}})
def promote_memory(
    memory_id: uuid.UUID, body: PromoteBody, principal: AppWriter, session: SessionDep,
    response: Response, if_match: Annotated[str | None, Header(alias="If-Match")] = None,
) -> MemoryWritten | RedactedAnswer:
    """Make a working memory durable, so closing its session keeps it."""
    memory = service.promote(session, tenant_id=principal.tenant_id, memory_id=memory_id,
                             if_match=if_match, volatility=Volatility(body.volatility))
    _etag(response, memory.revision)
    return memory


@router.get("/{memory_id}/versions")
def list_versions(memory_id: uuid.UUID, principal: AppReader, session: SessionDep) -> VersionList:
    """A memory's versions, oldest first."""
    return queries.versions(session, tenant_id=principal.tenant_id, memory_id=memory_id)


@router.get("/{memory_id}/lineage")
def read_lineage(memory_id: uuid.UUID, principal: AppReader, session: SessionDep) -> Lineage:
    """Versions, supersession and provenance of a memory."""
    return queries.lineage(session, tenant_id=principal.tenant_id, memory_id=memory_id)
