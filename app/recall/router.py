from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from app.core import uow
from app.core.deps import AppReader, WorkDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.embeddings.runtime import embedder
from app.recall import service
from app.recall.schemas import RecallMode, RecallRequest, RecallResponse

router = APIRouter(
    prefix="/v1/recall", tags=["recall"], route_class=uow.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)


@router.post("")
async def recall(body: RecallRequest, principal: AppReader, work: WorkDep) -> RecallResponse:
    """Recall a subject's live memories relevant to a query (hybrid vector + full text)."""
    # A read: nothing to replay, and storing the answer would copy memory text into
    # operation records. The query is embedded before any transaction opens.
    embedding = None
    if body.mode is not RecallMode.keyword:
        embedding = await run_in_threadpool(embedder().embed_one, body.query)

    def run() -> RecallResponse:
        return service.recall(
            work.open(), tenant_id=principal.tenant_id, subject=body.subject, query=body.query,
            embedding=embedding,
            limit=body.limit, include_suspect=body.include_suspect, mode=body.mode,
        )

    return await run_in_threadpool(run)
