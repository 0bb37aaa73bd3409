from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from app.api import route
from app.api.deps import ComplianceReader, SessionDep
from app.audit import service
from app.audit.schemas import AuditPage, VerifyResult
from app.core.errors import COMMON_PROBLEMS, InvalidRequest, problem_responses
from app.sources import service as sources

router = APIRouter(
    prefix="/v1/audit", tags=["audit"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)
LIST_PARAMS = frozenset({"target_id", "source", "action", "actor", "since", "limit", "cursor"})


def _known_query(request: Request) -> None:
    unknown = sorted(set(request.query_params) - LIST_PARAMS)
    if unknown:
        # A misspelt filter silently ignored would list the whole trail.
        raise InvalidRequest("Unknown query parameters: " + ", ".join(unknown[:5]))


@router.get("", dependencies=[Depends(_known_query)])
def list_audit_events(
    principal: ComplianceReader,
    session: SessionDep,
    target_id: Annotated[str | None, Query(max_length=255, pattern=r"^[^\x00]*$")] = None,
    source: Annotated[str | None, Query(
        min_length=1, max_length=255, pattern=r"^[^\x00]*$",
        description="Events about this source: the trail names sources by keyed digest "
                    "only, and this finds them by the plain name.")] = None,
    action: Annotated[str | None, Query(
        max_length=64, pattern=r"^[a-z_.]+$",
        description="Events of this action only, e.g. `memory.transition`, or a change to a "
                    "memory's content: `memory.created`, `memory.corrected`, "
                    "`memory.reverted`, `memory.struck`.")] = None,
    actor: Annotated[str | None, Query(max_length=100, pattern=r"^[^\x00]*$")] = None,
    since: Annotated[datetime | None, Query(description="Events at or after this time.")
                     ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> AuditPage:
    """List this tenant's audit events oldest first, optionally filtered (compliance key)."""
    if source is not None:
        hashed = sources.target(session, principal.tenant_id, source)
        if target_id is not None and target_id != hashed:
            return AuditPage(data=[], next_cursor=None)  # no event is about both
        target_id = hashed
    return service.events(session, tenant_id=principal.tenant_id, target_id=target_id,
                          action=action, actor=actor, since=since, limit=limit, cursor=cursor)


@router.get("/verify")
def verify_audit_chain(principal: ComplianceReader, session: SessionDep) -> VerifyResult:
    """Recompute this tenant's audit hash chain and say where it breaks (compliance key)."""
    return service.verify(session, tenant_id=principal.tenant_id)
