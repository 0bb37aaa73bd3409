from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool

from app.api import route
from app.api.deps import AdminDep
from app.core.errors import problem_responses
from app.metrics import service

router = APIRouter(tags=["health"], route_class=route.LetheRoute,
                   responses=problem_responses(401, 403, 500))


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}},
                             "description": "Prometheus text format"}})
async def metrics(_: AdminDep) -> Response:
    """Prometheus metrics for operators (admin token): every tenant's figures."""
    body = await run_in_threadpool(service.exposition)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
