"""`POST /v1/memories/batch`: many writes in one request, each answered in its slot."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from app.api import route
from app.api.deps import AppWriter, ClaimDep, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, LetheError, problem_responses
from app.ingestion import batch
from app.ingestion.schemas import BatchBody, BatchResult

router = APIRouter(
    tags=["memories"], route_class=route.LetheRoute, responses=problem_responses(*COMMON_PROBLEMS)
)


def _prepared(body: BatchBody, principal: AppWriter) -> list[batch.Item]:
    return batch.prepare(tenant_id=principal.tenant_id, raw=body.memories,
                         actor=audit.actor_for(principal))


# Listed before the session: every embedding is done before the transaction opens.
Prepared = Annotated[list[batch.Item], Depends(_prepared)]


@router.post("/v1/memories/batch", response_model=BatchResult)
def write_batch(
    body: BatchBody, principal: AppWriter, prepared: Prepared, session: SessionDep,
    claim: ClaimDep, request: Request,
) -> JSONResponse:
    """Remember up to 100 facts in one transaction; each item answered in its slot."""
    results = batch.apply(session, tenant_id=principal.tenant_id, items=prepared,
                          actor=audit.actor_for(principal),
                          batch_id=claim.derived_id(batch.KIND) if claim else None)
    route.current(request).names = batch.named(results)
    # Built here, not through the response model: an item's absent keys stay absent.
    return JSONResponse({"results": results})


class BatchMethodNotAllowed(LetheError):
    status, slug, title = 405, "method-not-allowed", "Method not allowed"


@router.api_route("/v1/memories/batch", methods=["GET", "PUT", "PATCH", "DELETE"],
                  include_in_schema=False)
def batch_other_methods() -> None:
    """Only POST: without this, `/v1/memories/{memory_id}` would take the path as an ID."""
    raise BatchMethodNotAllowed("Only POST is allowed here.", headers={"Allow": "POST"})
