"""Builds the configured embedder once per process."""

from __future__ import annotations

import functools
import logging
import math

from app.embeddings.coalescing import CoalescingEmbedder
from app.embeddings.local import LocalMiniLMEmbedder
from app.embeddings.model_process import ProcessEmbedder
from app.embeddings.openai_http import OpenAICompatibleEmbedder
from app.embeddings.provider import Embedder

log = logging.getLogger(__name__)


# Memoised per argument tuple (lru_cache(maxsize=None)) so the app builds one
# embedder per process: the model is expensive and the HTTP client pools sockets.
@functools.cache
def get_embedder(
    provider: str,
    *,
    model_path: str | None,
    api_url: str | None,
    api_key: str | None,
    api_model: str,
    batch_size: int,
    num_threads: int | None = None,
    own_process: bool = False,
) -> Embedder:
    if provider == "local":
        model = LocalMiniLMEmbedder(
            model_path=model_path, batch_size=batch_size, num_threads=num_threads)
        return CoalescingEmbedder(ProcessEmbedder(model) if own_process else model,
                                  max_batch=batch_size)
    if provider == "openai":
        if not api_url:
            raise ValueError("embedding provider 'openai' requires api_url")
        return OpenAICompatibleEmbedder(api_url, api_model, api_key, batch_size=batch_size)
    raise ValueError(f"unknown embedding provider {provider!r}; use 'local' or 'openai'")


def model_ready(embedder: Embedder) -> bool:
    # A probe must answer, not raise: any failure simply means "not ready".
    try:
        vector = embedder.embed_one("readiness probe")
    except Exception:
        log.warning("embedder %s is not ready", embedder.name, exc_info=True)
        return False
    return len(vector) == embedder.dimensions and all(math.isfinite(x) for x in vector)
