"""The two drivers of `retries.exchange`: blocking (httpx.Client) and async (AsyncClient)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import httpx

from lethe_client.call import Call
from lethe_client.models import Page
from lethe_client.retries import Reply, RetryPolicy, Send, Sleep, exchange

T = TypeVar("T")
PageCall = Callable[[str | None], Call[Page[T]]]

USER_AGENT = "lethe-client-python/0.1"


def client_options(base_url: str, api_key: str | None, timeout: float) -> dict[str, Any]:
    headers = {"User-Agent": USER_AGENT}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    return {"base_url": base_url.rstrip("/"), "headers": headers, "timeout": timeout}


def _request(send: Send) -> dict[str, Any]:
    return {"method": send.method, "url": send.path, "headers": send.headers,
            "params": send.params, "json": send.json}


class SyncTransport:
    def __init__(self, http: httpx.Client, retry: RetryPolicy) -> None:
        self.http = http
        self.retry = retry

    def run(self, call: Call[T]) -> T:
        steps = exchange(call, self.retry)
        reply: Reply = None
        try:
            while True:
                step = steps.send(reply)
                if isinstance(step, Sleep):
                    time.sleep(step.seconds)
                    reply = None
                    continue
                try:
                    reply = self.http.request(**_request(step))
                except httpx.TransportError as error:
                    reply = error
        except StopIteration as done:
            result: T = done.value
            return result

    def items(self, page_call: PageCall[T]) -> Iterator[T]:
        """Every item of a list, page after page, fetched as the iteration reaches it."""
        cursor: str | None = None
        while True:
            page = self.run(page_call(cursor))
            yield from page.data
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


class AsyncTransport:
    def __init__(self, http: httpx.AsyncClient, retry: RetryPolicy) -> None:
        self.http = http
        self.retry = retry

    async def run(self, call: Call[T]) -> T:
        steps = exchange(call, self.retry)
        reply: Reply = None
        try:
            while True:
                step = steps.send(reply)
                if isinstance(step, Sleep):
                    await asyncio.sleep(step.seconds)
                    reply = None
                    continue
                try:
                    reply = await self.http.request(**_request(step))
                except httpx.TransportError as error:
                    reply = error
        except StopIteration as done:
            result: T = done.value
            return result

    async def items(self, page_call: PageCall[T]) -> AsyncIterator[T]:
        cursor: str | None = None
        while True:
            page = await self.run(page_call(cursor))
            for item in page.data:
                yield item
            if page.next_cursor is None:
                return
            cursor = page.next_cursor
