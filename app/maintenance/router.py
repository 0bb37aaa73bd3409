from __future__ import annotations

from fastapi import APIRouter, status

from app.core import uow
from app.core.deps import ComplianceWriter, WorkDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency.schemas import OperationPublic
from app.maintenance import service, tasks

router = APIRouter(
    prefix="/v1/maintenance", tags=["maintenance"], route_class=uow.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.post("/{job}", status_code=status.HTTP_202_ACCEPTED)
def run_job(job: service.Job, principal: ComplianceWriter, work: WorkDep) -> OperationPublic:
    """Run a maintenance job now for this tenant (compliance key); poll the operation."""
    operation = service.accept(work.open(), tenant_id=principal.tenant_id, job=job,
                               api_key_id=principal.key_id)
    operation_id, tenant_id = operation.id, principal.tenant_id
    work.after_commit.append(lambda: tasks.send(operation_id, tenant_id))
    return OperationPublic.model_validate(operation)
