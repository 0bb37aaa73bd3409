from __future__ import annotations

from concurrent.futures import Future
from contextlib import nullcontext

from fastapi import APIRouter, Depends, Request, Response
from fastapi.security import HTTPAuthorizationCredentials
from starlette.concurrency import run_in_threadpool

from app.api import route
from app.api.deps import Credentials, checked_inside, identify, read_key, require_role
from app.core import replicas
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.embeddings.runtime import embed_soon
from app.recall import service
from app.recall.schemas import RecallMode, RecallRequest, RecallResponse
from app.tenants.models import Role

router = APIRouter(
    prefix="/v1/recall", tags=["recall"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


ROLE = Role.app


@router.post("", response_model=RecallResponse,
             dependencies=[Depends(checked_inside(ROLE)), Depends(read_key)])
async def recall(request: Request, body: RecallRequest, credentials: Credentials) -> Response:
    """Recall a subject's live memories relevant to a query (hybrid vector + full text)."""
    # The query starts embedding at once; meanwhile one worker thread checks the key and reads
    # what needs no vector (docs/decisions.md, "Recall reads while its query embeds"). A
    # refused key cancels an embedding that has not started. A read: nothing to replay, and
    # storing the answer would copy memory text into operation records.
    embedding = None if body.mode is RecallMode.keyword else embed_soon(body.query)
    try:
        answer = await run_in_threadpool(
            _recall, route.current(request), credentials, body, embedding)
    finally:
        if embedding is not None:
            embedding.cancel()
    return Response(answer, media_type="application/json")


def _recall(
    work: route.RequestWork, credentials: HTTPAuthorizationCredentials | None,
    body: RecallRequest, embedding: Future[list[float]] | None,
) -> bytes:
    principal = require_role(identify(work, credentials), ROLE)
    # Serialized once, here: the service built the model.
    # A replica past the tenant's last forget; a look back (`as_of`) reads the primary, which
    # holds every write made up to its instant, however recent.
    with (replicas.reading(principal.tenant_id) if body.as_of is None else nullcontext()):
        answer = service.recall(principal.tenant_id, body, embedding)
    return answer.model_dump_json().encode()
