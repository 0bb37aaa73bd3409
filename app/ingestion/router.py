from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response, status

from app.api import route
from app.api.deps import AppWriter, ClaimDep, RequiredKeyHeader, SessionDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.idempotency.schemas import LOCATION, OperationAccepted
from app.ingestion import service
from app.ingestion.schemas import IngestBody
from app.tenants.service import Principal

router = APIRouter(
    prefix="/v1/ingest", tags=["ingestion"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


async def _keyed_writer(principal: AppWriter, idempotency_key: RequiredKeyHeader) -> Principal:
    # Required here: the key names the operation and, through it, every memory it creates.
    # A request without one is answered 400 by the validation handler (core/errors.py).
    del idempotency_key
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
