from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.api import route
from app.api.deps import ClaimDep, ComplianceWriter, SessionDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency.schemas import LOCATION, OperationAccepted
from app.maintenance import service

router = APIRouter(
    prefix="/v1/maintenance", tags=["maintenance"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.post("/{job}", status_code=status.HTTP_202_ACCEPTED,
             responses={202: {"headers": LOCATION}})
def run_job(
    job: service.Job, principal: ComplianceWriter, session: SessionDep, claim: ClaimDep,
    response: Response,
) -> OperationAccepted:
    """Run a maintenance job now for this tenant (compliance key); poll the operation."""
    accepted = OperationAccepted.of(service.accept(
        session, tenant_id=principal.tenant_id, job=job, api_key_id=principal.key_id,
        claim=claim))
    response.headers["Location"] = accepted.location
    return accepted
