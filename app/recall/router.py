from __future__ import annotations

import asyncio
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
    # operation records. The query is embedded on one thread while the lexical half is read
    # on another; no transaction is open while the model runs.
    embedding: asyncio.Future[list[float]] | None = None
    if body.mode is not RecallMode.keyword:
        embedding = asyncio.ensure_future(run_in_threadpool(embedder().embed_one, body.query))
    try:
        lexical = await run_in_threadpool(_lexical, principal.tenant_id, body)
    except BaseException:
        if embedding is not None:
            await asyncio.gather(embedding, return_exceptions=True)
        raise
    vector = await embedding if embedding is not None else None
    answer = await run_in_threadpool(_results, principal.tenant_id, body, vector, lexical)
    # Serialized once here: the model was built and checked by the service.
    return Response(answer.model_dump_json(), media_type="application/json")


def _lexical(tenant_id: uuid.UUID, body: RecallRequest) -> service.Lexical:
    with db.session_scope(tenant_id) as session:
        return service.read_lexical(session, tenant_id=tenant_id, request=body)


def _results(tenant_id: uuid.UUID, body: RecallRequest, vector: list[float] | None,
             lexical: service.Lexical) -> RecallResponse:
    with db.session_scope(tenant_id) as session:
        return service.read_vector_and_results(session, request=body, embedding=vector,
                                               lexical=lexical)
