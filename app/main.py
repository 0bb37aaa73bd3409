"""create_app(): routers, error handlers, console, and the lifespan that loads the model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from app.access.router import router as access_router
from app.api import openapi_links
from app.apidocs import router as apidocs
from app.artifacts.router import router as artifacts_router
from app.audit.router import router as audit_router
from app.compat.mem0.router import router as mem0_router
from app.core import errors, logs, memtrace
from app.core.body_limit import BodyLimitMiddleware
from app.core.config import get_settings
from app.core.utf8 import Utf8Middleware
from app.embeddings import runtime as embeddings
from app.erasure.router import router as erasure_router
from app.forgetting.describe_router import router as describe_router
from app.forgetting.revalidation_router import router as ladder_router
from app.forgetting.router import router as forgetting_router
from app.forgetting.sessions_router import router as sessions_router
from app.health.router import router as health_router
from app.holds.router import router as holds_router
from app.idempotency.router import router as operations_router
from app.ingestion.batch_router import router as batch_router
from app.ingestion.router import router as ingestion_router
from app.invalidation.router import router as dependencies_router
from app.maintenance.router import router as maintenance_router
from app.memories.router import router as memories_router
from app.metrics.router import router as metrics_router
from app.recall.router import router as recall_router
from app.receipts import keys as receipt_keys
from app.receipts.router import router as receipts_router
from app.sources.router import router as sources_router
from app.staff.router import router as staff_router
from app.tenant_settings.router import router as settings_router
from app.tenants.router import keys_router
from app.tenants.router import router as tenants_router
from app.webhooks.router import router as webhooks_router

DESCRIPTION = (
    "Lethe remembers facts about your users for your assistant and forgets them correctly: "
    "corrections win, forgets stick, retries never resurrect."
)


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Load the embedding model before serving: uvicorn listens only once this yields, so
    the first write or recall does not wait for the model, and `/readyz` answering means
    fast."""
    settings = get_settings()
    if settings.tracemalloc_file is not None:
        memtrace.start(settings.tracemalloc_file, settings.tracemalloc_seconds)
    await run_in_threadpool(embeddings.load_or_log)
    # Like the other secrets: production refuses to serve without its receipt key.
    await run_in_threadpool(receipt_keys.signing_key)
    yield


def create_app() -> FastAPI:
    logs.configure()
    app = FastAPI(
        title="Lethe",
        version="1.0.0",
        description=DESCRIPTION,
        openapi_url="/openapi.json",
        # Served from the package by app/apidocs instead: FastAPI's pages load a CDN.
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    errors.install(app)
    app.include_router(apidocs.router)
    app.mount(apidocs.ASSETS, apidocs.assets(), name="docs-assets")
    for router in (
        health_router,
        metrics_router,
        tenants_router,
        keys_router,
        staff_router,
        settings_router,
        batch_router,
        memories_router,
        recall_router,
        forgetting_router,
        sources_router,
        describe_router,
        sessions_router,
        ladder_router,
        ingestion_router,
        dependencies_router,
        maintenance_router,
        operations_router,
        audit_router,
        holds_router,
        erasure_router,
        access_router,
        receipts_router,
        artifacts_router,
        webhooks_router,
        mem0_router,
    ):
        app.include_router(router)

    built = app.openapi

    def openapi_with_links() -> dict[str, Any]:
        # FastAPI keeps the document it built; the links are added to that one, once.
        if app.openapi_schema is None:
            openapi_links.add(built())
        return built()

    app.openapi = openapi_with_links  # type: ignore[method-assign]

    from console.app import create_console

    app.mount("/console", create_console())
    app.add_middleware(BodyLimitMiddleware, max_bytes=get_settings().max_body_bytes)
    app.add_middleware(Utf8Middleware)
    # Outermost: every answer, even a refused one, carries its request ID.
    app.add_middleware(logs.RequestIdMiddleware)
    return app
