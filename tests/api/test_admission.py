"""API requests are admitted fewer at once than the threads they share, so a request holding
a pooled connection always finds a thread for its next step (route, commit) while the
others wait in the event loop, not in a thread for a connection (app/api/admission.py)."""

from __future__ import annotations

import asyncio

import httpx
from fastapi import APIRouter, FastAPI

from app.api import admission
from app.api.route import LetheRoute
from app.core.config import get_settings


def test_admitted_requests_leave_a_thread_for_each_pooled_connection() -> None:
    assert admission.admitted(40, 10) == 30
    assert admission.admitted(40, 1) == 39


def test_a_pool_as_large_as_the_threads_still_admits_half_and_never_all() -> None:
    assert admission.admitted(40, 40) == 20
    assert admission.admitted(40, 200) == 20
    assert admission.admitted(2, 10) == 1


def test_a_request_past_the_admitted_number_waits_until_one_finishes() -> None:
    # anyio's 40 threads and a pool of 10 (the default): 30 requests are worked on at once.
    admitted = admission.admitted(40, get_settings().db_pool_size)
    release = asyncio.Event()
    inside = 0

    router = APIRouter(route_class=LetheRoute)

    @router.get("/held")
    async def held() -> dict[str, int]:
        nonlocal inside
        inside += 1
        await release.wait()
        return {"inside": inside}

    app = FastAPI()
    app.include_router(router)

    async def scenario() -> tuple[int, int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            sent = [asyncio.create_task(client.get("/held")) for _ in range(admitted + 1)]
            for _ in range(200):  # let every request reach the route or the gate
                await asyncio.sleep(0)
            entered_while_held = inside
            release.set()
            answers = await asyncio.gather(*sent)
        assert all(answer.status_code == 200 for answer in answers)
        return entered_while_held, inside

    assert asyncio.run(scenario()) == (admitted, admitted + 1)
