"""`Lethe` and `AsyncLethe`: a base URL, a key, and the resources of API.md."""

from __future__ import annotations

import os
from types import TracebackType
from typing import Self

import httpx

from lethe_client import aresources as a
from lethe_client import resources as r
from lethe_client.retries import RetryPolicy
from lethe_client.transport import AsyncTransport, SyncTransport, client_options

DEFAULT_URL = "http://127.0.0.1:8000"


def _settings(base_url: str | None, api_key: str | None) -> tuple[str, str | None]:
    return (base_url or os.environ.get("LETHE_URL") or DEFAULT_URL,
            api_key or os.environ.get("LETHE_API_KEY"))


class Lethe(r.Top):
    """The blocking client. ``api_key`` defaults to `LETHE_API_KEY`, ``base_url`` to
    `LETHE_URL`; pass ``http_client`` to reuse or instrument an httpx.Client (its base URL
    and headers are set here)."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 60.0, retry: RetryPolicy | None = None,
                 http_client: httpx.Client | None = None) -> None:
        options = client_options(*_settings(base_url, api_key), timeout)
        if http_client is None:
            http_client = httpx.Client(**options)
        else:
            http_client.base_url = options["base_url"]
            http_client.headers.update(options["headers"])
        super().__init__(SyncTransport(http_client, retry or RetryPolicy()))
        self.memories = r.Memories(self._t)
        self.operations = r.Operations(self._t)
        self.settings = r.Settings(self._t)
        self.sources = r.Sources(self._t)
        self.dependencies = r.Dependencies(self._t)
        self.audit = r.Audit(self._t)
        self.erasure_requests = r.ErasureRequests(self._t)
        self.access_requests = r.AccessRequests(self._t)
        self.legal_holds = r.LegalHolds(self._t)
        self.artifacts = r.Artifacts(self._t)
        self.webhooks = r.Webhooks(self._t)
        self.api_keys = r.ApiKeys(self._t)
        self.staff = r.Staff(self._t)
        self.tenants = r.Tenants(self._t)

    def close(self) -> None:
        self._t.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None,
                 ) -> None:
        self.close()


class AsyncLethe(a.Top):
    """The asyncio client: `Lethe`'s resources, each call awaited."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 60.0, retry: RetryPolicy | None = None,
                 http_client: httpx.AsyncClient | None = None) -> None:
        options = client_options(*_settings(base_url, api_key), timeout)
        if http_client is None:
            http_client = httpx.AsyncClient(**options)
        else:
            http_client.base_url = options["base_url"]
            http_client.headers.update(options["headers"])
        super().__init__(AsyncTransport(http_client, retry or RetryPolicy()))
        self.memories = a.Memories(self._t)
        self.operations = a.Operations(self._t)
        self.settings = a.Settings(self._t)
        self.sources = a.Sources(self._t)
        self.dependencies = a.Dependencies(self._t)
        self.audit = a.Audit(self._t)
        self.erasure_requests = a.ErasureRequests(self._t)
        self.access_requests = a.AccessRequests(self._t)
        self.legal_holds = a.LegalHolds(self._t)
        self.artifacts = a.Artifacts(self._t)
        self.webhooks = a.Webhooks(self._t)
        self.api_keys = a.ApiKeys(self._t)
        self.staff = a.Staff(self._t)
        self.tenants = a.Tenants(self._t)

    async def aclose(self) -> None:
        await self._t.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None,
                        ) -> None:
        await self.aclose()
