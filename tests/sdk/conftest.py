"""What the SDK tests share beside the live `lethe serve` of tests/conftest.py (`server`)."""

from __future__ import annotations

from typing import Any

import httpx


class Recorder:
    """httpx event hooks that note each answer's status and the Idempotency-Key sent."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int, str | None]] = []

    def hooks(self) -> dict[str, list[Any]]:
        return {"response": [self.note]}

    def note(self, response: httpx.Response) -> None:
        request = response.request
        self.seen.append((request.method, request.url.path, response.status_code,
                          request.headers.get("idempotency-key")))

    async def anote(self, response: httpx.Response) -> None:
        self.note(response)
