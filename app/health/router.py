"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from app.api.access import public
from app.health import service

router = APIRouter(tags=["health"], dependencies=[Depends(public)])


@router.get("/healthz", responses={503: {"description": "The database does not answer"}})
async def healthz() -> JSONResponse:
    """200 when the database answers."""
    ok = await run_in_threadpool(service.database_answers)
    return _answer({"database": ok})


@router.get("/readyz", responses={503: {"description": "Not ready to serve"}})
async def readyz() -> JSONResponse:
    """200 when the database answers, migrations are at head and the embedding model works."""
    checks = await run_in_threadpool(service.readiness)
    return _answer(checks)


def _answer(checks: dict[str, Any]) -> JSONResponse:
    ok = all(value is True for value in checks.values())
    return JSONResponse(
        {"status": "ok" if ok else "unavailable", "checks": checks},
        status_code=200 if ok else 503,
    )
