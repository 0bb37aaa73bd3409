from __future__ import annotations

import uuid

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from app.core import uow
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
    # operation records. One trip to a worker thread for both the embedding and the reads.
    return Response(await run_in_threadpool(_recall, principal.tenant_id, body),
                    media_type="application/json")


def _recall(tenant_id: uuid.UUID, body: RecallRequest) -> bytes:
    # The query is embedded before the read transaction opens (no connection is held while
    # the model runs); the answer is serialized once, here: the service built the model.
    vector = embedder().embed_one(body.query) if body.mode is not RecallMode.keyword else None
    return service.recall(tenant_id, body, vector).model_dump_json().encode()
