"""How many API requests are worked on at once: fewer than the threads they share.

A request's blocking steps (its key check, dependencies, route, commit) each take one of the
event loop's worker threads in turn (anyio's default limiter, 40), and a request holds its
pooled connection between those steps without a thread. Unbounded, a burst of requests could
take every thread and wait in them for a connection, while the requests holding all the
connections waited for a thread to run their route or commit: nothing moved until the pool's
30 s timeout answered the waiters 503. With fewer requests admitted than there are threads, a
request holding a connection always finds a thread; the others wait here, costing no thread.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread

from app.core.config import get_settings

# One gate per event loop (the limiter is per loop too); a test client may run several.
_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary())


def admitted(threads: int, pool_size: int) -> int:
    """Requests worked on at once: ``threads`` less one per pooled connection, which leaves
    a thread for every request that holds one; at least half the threads (a pool as large as
    the thread limiter), and always fewer than all of them."""
    return max(threads - pool_size, threads // 2, 1)


@asynccontextmanager
async def slot() -> AsyncIterator[None]:
    """Wait, in the event loop, until fewer than `admitted` requests are being worked on."""
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        threads = int(anyio.to_thread.current_default_thread_limiter().total_tokens)
        gate = _gates[loop] = asyncio.Semaphore(admitted(threads, get_settings().db_pool_size))
    async with gate:
        yield
