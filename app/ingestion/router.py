from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response, status
from starlette.concurrency import run_in_threadpool

from app.api import route
from app.api.deps import AppWriter, ClaimDep, RequiredKeyHeader, SessionDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency.schemas import LOCATION, OperationAccepted
from app.ingestion import service
from app.ingestion.schemas import IngestBody
from app.limits import service as limits
from app.tenants.service import Principal

router = APIRouter(
    prefix="/v1/ingest", tags=["ingestion"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


async def _keyed_writer(request: Request, principal: AppWriter,
                        idempotency_key: RequiredKeyHeader) -> Principal:
    # Required here: the key names the operation and, through it, every memory it creates.
    # A request without one is answered 400 by the validation handler (core/errors.py).
    del idempotency_key
    size = len(await request.body())
    await run_in_threadpool(
        lambda: limits.refuse_large_ingest(tenant_id=principal.tenant_id, size=size))
    return principal


KeyedAppWriter = Annotated[Principal, Depends(_keyed_writer)]


@router.post("", name="ingest", status_code=status.HTTP_202_ACCEPTED,
             responses={202: {"headers": LOCATION}})
def ingest(
    body: IngestBody, principal: KeyedAppWriter, session: SessionDep, claim: ClaimDep,
    response: Response,
) -> OperationAccepted:
    """Accept memories and messages to apply in the background (Idempotency-Key required)."""
    assert claim is not None, "the required Idempotency-Key header was claimed"
    accepted = OperationAccepted.of(
        service.accept(session, claim=claim, api_key_id=principal.key_id, body=body))
    response.headers["Location"] = accepted.location
    return accepted
