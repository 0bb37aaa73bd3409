"""Client for any server exposing OpenAI's POST /embeddings shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from app.embeddings.provider import EmbeddingError, batches


class OpenAICompatibleEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        dimensions: int = 384,
        batch_size: int = 64,
        timeout: float = 30.0,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.name = f"openai:{model}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # One pooled client per embedder: keep-alive matters when a large
        # input is split into many batches. httpx.Client is thread-safe.
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for batch in batches(texts, self.batch_size):
            out.extend(self._embed_batch(list(batch)))
        return out

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        # "dimensions" is deliberately not sent: many compatible servers
        # reject unknown fields; we validate the length instead.
        try:
            resp = self._client.post(self.url, json={"model": self.model, "input": batch})
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"embedding request to {self.url} failed: {exc}") from exc
        if resp.status_code >= 400:
            raise EmbeddingError(
                f"embedding server returned HTTP {resp.status_code}: {resp.text[:200]}"
            )
        try:
            items: list[dict[str, Any]] = resp.json()["data"]
            # Order by index: the spec does not promise data[] is in input order.
            items = sorted(items, key=lambda item: int(item["index"]))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
            indices = [int(item["index"]) for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"malformed embedding response: {exc}") from exc
        if indices != list(range(len(batch))):
            raise EmbeddingError(
                f"expected {len(batch)} embeddings indexed 0..{len(batch) - 1}, "
                f"got indices {indices[:10]}"
            )
        for vector in vectors:
            if len(vector) != self.dimensions:
                raise EmbeddingError(
                    f"expected {self.dimensions}-dim embeddings, got {len(vector)}"
                )
        return vectors
