from __future__ import annotations

import uuid

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from app.core import db, uow
from app.core.deps import AppReader
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.embeddings.runtime import embedder
from app.recall import service
from app.recall.schemas import RecallMode, RecallRequest, RecallResponse

router = APIRouter(
    prefix="/v1/recall", tags=["recall"], route_class=uow.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.post("", response_model=RecallResponse)
async def recall(body: RecallRequest, principal: AppReader) -> Response:
    """Recall a subject's live memories relevant to a query (hybrid vector + full text)."""
    # A read: nothing to replay, and storing the answer would copy memory text into
    # operation records. The query is embedded before the transaction opens.
    vector = None
    if body.mode is not RecallMode.keyword:
        vector = await run_in_threadpool(embedder().embed_one, body.query)
    answer = await run_in_threadpool(_recall, principal.tenant_id, body, vector)
    # Serialized once here: the service built and checked the model.
    return Response(answer.model_dump_json(), media_type="application/json")


def _recall(tenant_id: uuid.UUID, body: RecallRequest,
            vector: list[float] | None) -> RecallResponse:
    with db.session_scope(tenant_id) as session:
        return service.recall(session, tenant_id=tenant_id, request=body, embedding=vector)
