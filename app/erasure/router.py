"""`/v1/erasure-requests`: app keys file and poll erasures; compliance lists, approves and
cancels them."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from app.api import route
from app.api.deps import (
    AppReader,
    AppWriter,
    ComplianceReader,
    ComplianceWriter,
    SessionDep,
    derived_id,
)
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.erasure import service
from app.erasure.models import ErasureStatus
from app.erasure.schemas import (
    ErasureFiled,
    ErasureRequestCreate,
    ErasureRequestList,
    ErasureRequestPublic,
    Receipt,
)

PATH = "/v1/erasure-requests"
router = APIRouter(
    prefix=PATH, tags=["compliance"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)
CreatedId = Annotated[uuid.UUID | None, Depends(derived_id("erasure_request"))]
LOCATION = {"Location": {"description": "The request, to poll.", "schema": {"type": "string"}}}


@router.post("", status_code=status.HTTP_202_ACCEPTED, responses={
    202: {"description": "Filed; the cascade runs in the background.", "headers": LOCATION},
    200: {"model": ErasureFiled, "headers": LOCATION,
          "description": "A request for this subject is open already: that one."},
})
def file_erasure(
    body: ErasureRequestCreate, principal: AppWriter, session: SessionDep,
    request_id: CreatedId, response: Response,
) -> ErasureFiled:
    """File a data subject's erasure (GDPR Art. 17); poll it at `Location`."""
    filed, created = service.file(session, tenant_id=principal.tenant_id, body=body,
                                  actor=audit.actor_for(principal), request_id=request_id)
    if not created:
        response.status_code = status.HTTP_200_OK
    response.headers["Location"] = f"{PATH}/{filed.id}"
    return filed


@router.get("")
def list_erasures(
    principal: ComplianceReader,
    session: SessionDep,
    status_: Annotated[ErasureStatus | None, Query(alias="status")] = None,
    subject: Annotated[str | None, Query(min_length=1, max_length=255,
                                         description="Matched through its keyed digest, "
                                                     "so completed requests are found too.")
                       ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> ErasureRequestList:
    """List erasure requests oldest first (compliance key)."""
    return service.page(session, tenant_id=principal.tenant_id, status=status_,
                        subject=subject, limit=limit, cursor=cursor)


@router.get("/{request_id}")
def get_erasure(request_id: uuid.UUID, principal: AppReader, session: SessionDep
                ) -> ErasureRequestPublic:
    """An erasure request with its progress, and its signed receipt once it has one."""
    return service.get(session, tenant_id=principal.tenant_id, request_id=request_id)


@router.get("/{request_id}/receipt")
def get_receipt(request_id: uuid.UUID, principal: AppReader, session: SessionDep) -> Receipt:
    """The signed receipt (409 `receipt-not-ready` before the cascade has run); verify it
    with `GET /v1/receipts/public-key` or `lethe receipts verify`."""
    return service.receipt_of(session, tenant_id=principal.tenant_id, request_id=request_id)


@router.post("/{request_id}/approve")
def approve_erasure(request_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep
                    ) -> ErasureRequestPublic:
    """Approve a `pending_approval` request: its cascade is queued (compliance key)."""
    return service.approve(session, tenant_id=principal.tenant_id, request_id=request_id,
                           actor=audit.actor_for(principal))


@router.post("/{request_id}/cancel")
def cancel_erasure(request_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep
                   ) -> ErasureRequestPublic:
    """Cancel a request that has not started running (compliance key)."""
    return service.cancel(session, tenant_id=principal.tenant_id, request_id=request_id,
                          actor=audit.actor_for(principal))
