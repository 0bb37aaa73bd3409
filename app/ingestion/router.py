from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response, status

from app.core import uow
from app.core.deps import AppWriter, RequiredKeyHeader, WorkDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.ingestion import service, tasks
from app.ingestion.schemas import IngestAccepted, IngestBody
from app.tenants.service import Principal

router = APIRouter(
    prefix="/v1/ingest", tags=["ingestion"], route_class=uow.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


async def _keyed_writer(principal: AppWriter, idempotency_key: RequiredKeyHeader) -> Principal:
    # Required here: the key names the operation and, through it, every memory it creates.
    # A request without one is answered 400 by the validation handler (core/errors.py).
    del idempotency_key
    return principal


KeyedAppWriter = Annotated[Principal, Depends(_keyed_writer)]


@router.post("", name="ingest", status_code=status.HTTP_202_ACCEPTED)
def ingest(
    body: IngestBody, principal: KeyedAppWriter, work: WorkDep, response: Response
) -> IngestAccepted:
    """Accept memories and messages to apply in the background (Idempotency-Key required)."""
    session = work.open()
    assert work.claim is not None, "the required Idempotency-Key header was claimed"
    operation = service.accept(session, claim=work.claim, api_key_id=principal.key_id,
                               body=body)
    operation_id, tenant_id = operation.id, principal.tenant_id
    # The unit of work records its idempotency answer into this same row, then sends.
    work.operation_id = operation_id
    work.after_commit.append(lambda: tasks.send(operation_id, tenant_id))
    response.headers["Location"] = f"/v1/operations/{operation_id}"
    return IngestAccepted(operation_id=operation_id)
