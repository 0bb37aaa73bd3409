from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Header, Response

from app.api import route
from app.api.deps import AppWriter, ComplianceWriter, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.forgetting import revalidation as ladder
from app.memories.models import MemoryState
from app.memories.schemas import MemoryPublic, RedactedAnswer

router = APIRouter(
    prefix="/v1/memories/{memory_id}", tags=["forgetting"], route_class=route.LetheRoute,
    responses={**problem_responses(*COMMON_PROBLEMS), **problem_responses(412)},
)
IfMatch = Annotated[
    str | None, Header(alias="If-Match", description='Optional: the ETag last read, e.g. `"3"`.')
]


def _answer(response: Response, memory: MemoryPublic) -> MemoryPublic:
    response.headers["ETag"] = f'"{memory.revision}"'
    return memory


@router.post("/confirm")
def confirm(memory_id: uuid.UUID, principal: AppWriter, session: SessionDep, response: Response,
            if_match: IfMatch = None) -> MemoryPublic | RedactedAnswer:
    """Re-validation passed: suspect → active, last_validated_at = now, revision + 1."""
    return _answer(response, ladder.confirm(
        session, tenant_id=principal.tenant_id, memory_id=memory_id, if_match=if_match,
        actor=audit.actor_for(principal)))


@router.post("/reject")
def reject(memory_id: uuid.UUID, principal: AppWriter, session: SessionDep, response: Response,
           if_match: IfMatch = None) -> MemoryPublic | RedactedAnswer:
    """Re-validation failed: → deprecated."""
    return _answer(response, ladder.move(
        session, tenant_id=principal.tenant_id, memory_id=memory_id, if_match=if_match,
        to_state=MemoryState.deprecated, reason="rejected", actor=audit.actor_for(principal)))


@router.post("/quarantine")
def quarantine(memory_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep,
               response: Response, if_match: IfMatch = None) -> MemoryPublic | RedactedAnswer:
    """Quarantine (compliance key): never retrieved, kept for audit, reversible."""
    return _answer(response, ladder.move(
        session, tenant_id=principal.tenant_id, memory_id=memory_id, if_match=if_match,
        to_state=MemoryState.quarantined, reason="compliance decision",
        actor=audit.actor_for(principal)))


@router.post("/release")
def release(memory_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep,
            response: Response, if_match: IfMatch = None) -> MemoryPublic | RedactedAnswer:
    """Release from quarantine (compliance key): the one way back to active."""
    return _answer(response, ladder.move(
        session, tenant_id=principal.tenant_id, memory_id=memory_id, if_match=if_match,
        to_state=MemoryState.active, reason="released", actor=audit.actor_for(principal)))
