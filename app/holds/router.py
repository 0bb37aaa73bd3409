"""`/v1/legal-holds`: compliance places, lists, reads and releases legal holds."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query, Response, status

from app.api import route
from app.api.deps import ComplianceReader, ComplianceWriter, SessionDep, derived_id
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.holds import service as holds
from app.holds.schemas import HoldCreate, LegalHoldDetail, LegalHoldList, LegalHoldPublic

router = APIRouter(
    tags=["compliance"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)

CreatedId = Annotated[uuid.UUID | None, Depends(derived_id("legal_hold"))]


@router.post("/v1/legal-holds", status_code=status.HTTP_201_CREATED)
def place_hold(
    body: Annotated[HoldCreate, Body()], principal: ComplianceWriter, session: SessionDep,
    hold_id: CreatedId,
) -> LegalHoldPublic:
    """Place a legal hold on a subject, memory IDs or a source (compliance key)."""
    return holds.place(session, tenant_id=principal.tenant_id, body=body,
                       actor=audit.actor_for(principal), hold_id=hold_id)


@router.get("/v1/legal-holds")
def list_holds(
    principal: ComplianceReader,
    session: SessionDep,
    active: Annotated[bool | None, Query(description="true: unreleased; false: released")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> LegalHoldList:
    """List legal holds, oldest first (compliance key)."""
    return holds.holds(session, tenant_id=principal.tenant_id, active=active, limit=limit,
                       cursor=cursor)


@router.get("/v1/legal-holds/{hold_id}")
def get_hold(hold_id: uuid.UUID, principal: ComplianceReader, session: SessionDep
             ) -> LegalHoldDetail:
    """A legal hold, with how many memories it covers now (compliance key)."""
    return holds.get(session, tenant_id=principal.tenant_id, hold_id=hold_id)


@router.delete("/v1/legal-holds/{hold_id}", status_code=status.HTTP_204_NO_CONTENT)
def release_hold(
    hold_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep,
    reason: Annotated[str | None, Query(
        max_length=500, pattern=r"^[^\x00]*$",
        description="Why the hold is released (optional; recorded in the audit event).",
    )] = None,
) -> Response:
    """Release a legal hold: the record stays, with `released_at` (again: still 204)."""
    holds.release(session, tenant_id=principal.tenant_id, hold_id=hold_id,
                  actor=audit.actor_for(principal), reason=reason)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
