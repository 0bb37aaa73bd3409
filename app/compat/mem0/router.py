"""`/compat/mem0`: mem0's open-source REST server's paths over Lethe, for an app key.

A mem0 caller switches by changing its base URL to `<lethe>/compat/mem0` and sending
`Authorization: Bearer <app key>`. What maps to what, and what differs: docs/compat-mem0.md.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response, status
from fastapi.responses import JSONResponse
from pydantic import Field

from app.api import route
from app.api.deps import AppReader, AppWriter, ClaimDep, SessionDep, derived_id, read_key
from app.audit import service as audit
from app.compat.mem0 import service, translate
from app.compat.mem0.schemas import (
    Mem0Add,
    Mem0Added,
    Mem0ErasureRequested,
    Mem0History,
    Mem0Memory,
    Mem0MemoryList,
    Mem0Notice,
    Mem0RunClosed,
    Mem0Scope,
    Mem0Search,
    Mem0SearchResults,
    Mem0Update,
)
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.forgetting.forget_requests import PreparedRemember
from app.memories import queries
from app.memories.service import PreparedPatch

router = APIRouter(
    prefix="/compat/mem0", tags=["mem0 compatibility"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)
LIST_DEFAULT, LIST_MAX = 100, 1000


class Mem0ListQuery(Mem0Scope):
    limit: int = Field(LIST_DEFAULT, ge=1, le=LIST_MAX, description="How many at most.")


def _without_texts(body: Any) -> Any:
    # A stored answer names memories only inside `results`, where a later forget of one of
    # them would not find it: replays answer the IDs and events, never the texts.
    if isinstance(body, dict) and isinstance(body.get("results"), list):
        return {**body, "results": [{**event, "memory": None} for event in body["results"]]}
    return body


def _replays_without_texts(body: Mem0Add, request: Request) -> None:
    work = route.current(request)
    work.redact = _without_texts
    work.subject = translate.subject_of(body)  # its stored answer is sealed under its key


def _about_scope(query: Annotated[Mem0Scope, Query()], request: Request) -> None:
    # `?user_id=` names the subject: the stored answer is sealed under its key.
    route.current(request).subject = translate.subject_of(query)


def _prepared_add(body: Mem0Add, principal: AppWriter) -> list[PreparedRemember]:
    return service.prepare_add(tenant_id=principal.tenant_id, body=body,
                               actor=audit.actor_for(principal))


def _prepared_update(body: Mem0Update) -> PreparedPatch:
    return service.prepare_update(body)


# Dependencies resolve in the order a route lists them: the prepare step, then the session.
PreparedAdd = Annotated[list[PreparedRemember], Depends(_prepared_add)]
PreparedUpdate = Annotated[PreparedPatch, Depends(_prepared_update)]
ErasureId = Annotated[uuid.UUID | None, Depends(derived_id("erasure_request"))]


@router.post("/memories", dependencies=[Depends(_replays_without_texts)])
def add_memories(body: Mem0Add, principal: AppWriter, prepared: PreparedAdd,
                 session: SessionDep, claim: ClaimDep) -> Mem0Added:
    """Store each user message as one memory (mem0 `add`, without LLM extraction)."""
    events = service.add(
        session, tenant_id=principal.tenant_id, prepared=prepared,
        actor=audit.actor_for(principal),
        derived_id=lambda n: claim.derived_id(f"mem0-message:{n}") if claim else None)
    return Mem0Added(results=events)


@router.get("/memories")
def list_memories(query: Annotated[Mem0ListQuery, Query()], principal: AppReader,
                  session: SessionDep) -> Mem0MemoryList:
    """A user's (or agent's) live memories, oldest first (mem0 `get_all`)."""
    return Mem0MemoryList(results=service.list_memories(
        session, tenant_id=principal.tenant_id, scope=query, limit=query.limit))


@router.get("/memories/{memory_id}")
def get_memory(memory_id: uuid.UUID, principal: AppReader, session: SessionDep) -> Mem0Memory:
    """One memory (mem0 `get`)."""
    return translate.item(queries.get(session, tenant_id=principal.tenant_id,
                                      memory_id=memory_id))


@router.put("/memories/{memory_id}")
def update_memory(memory_id: uuid.UUID, body: Mem0Update, principal: AppWriter,
                  prepared: PreparedUpdate, session: SessionDep) -> Mem0Notice:
    """Correct a memory's text (mem0 `update`): a new version, the old one in its history."""
    service.update(session, tenant_id=principal.tenant_id, memory_id=memory_id, body=body,
                   prepared=prepared, actor=audit.actor_for(principal))
    return Mem0Notice(message="Memory updated successfully!")


@router.get("/memories/{memory_id}/history")
def memory_history(memory_id: uuid.UUID, principal: AppReader, session: SessionDep
                   ) -> list[Mem0History]:
    """A memory's versions as mem0 history rows, oldest first."""
    versions = queries.versions(session, tenant_id=principal.tenant_id, memory_id=memory_id)
    return translate.history(memory_id, versions.data)


@router.delete("/memories/{memory_id}")
def delete_memory(memory_id: uuid.UUID, principal: AppWriter, session: SessionDep) -> Mem0Notice:
    """Forget a memory: tombstoned, content purged, its source excluded (mem0 `delete`)."""
    service.delete(session, tenant_id=principal.tenant_id, memory_id=memory_id,
                   actor=audit.actor_for(principal))
    return Mem0Notice(message="Memory deleted successfully")


LOCATION = {"Location": {"description": "The erasure request, to poll.",
                         "schema": {"type": "string"}}}


@router.delete("/memories", status_code=status.HTTP_202_ACCEPTED,
               dependencies=[Depends(_about_scope)],
               response_model=Mem0ErasureRequested, responses={
    202: {"description": "An erasure of the user was filed.", "headers": LOCATION},
    200: {"model": Mem0ErasureRequested | Mem0RunClosed,
          "description": "With `run_id`: the run closed (`Mem0RunClosed`). Otherwise an "
          "erasure of this subject was open already: that one, at `Location`."}})
def delete_all_memories(query: Annotated[Mem0Scope, Query()], principal: AppWriter,
                        session: SessionDep, request_id: ErasureId, response: Response
                        ) -> Any:
    """mem0 `delete_all`: with `run_id`, close that agent run (its working memories go);
    otherwise file an erasure request for the user, to poll at `Location`."""
    actor = audit.actor_for(principal)
    if query.run_id is not None:
        closed = service.close_run(session, tenant_id=principal.tenant_id, scope=query,
                                   actor=actor)
        # Its own shape, not the 202's: answered as it is.
        return JSONResponse(closed.model_dump(mode="json"), status_code=status.HTTP_200_OK)
    answer, created = service.delete_all(
        session, tenant_id=principal.tenant_id, scope=query, actor=actor,
        request_id=request_id)
    if not created:
        response.status_code = status.HTTP_200_OK
    response.headers["Location"] = f"/v1/erasure-requests/{answer.erasure_request.id}"
    return answer


@router.post("/search", dependencies=[Depends(read_key)])
def search_memories(body: Mem0Search, principal: AppReader) -> Mem0SearchResults:
    """Recall a user's memories relevant to a query (mem0 `search`); a read, never stored."""
    return Mem0SearchResults(results=service.search(tenant_id=principal.tenant_id, body=body))
