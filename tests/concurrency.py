"""Running calls at the same instant, for tests of what two overlapping runs do."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def together(*calls: Callable[[], T]) -> list[T]:
    """Run ``calls`` in threads released at the same instant; their results, in order.

    A call's exception is raised here: a failing thread must fail the test.
    """
    barrier = threading.Barrier(len(calls))

    def released(call: Callable[[], T]) -> T:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(released, call) for call in calls]
        return [future.result() for future in futures]
