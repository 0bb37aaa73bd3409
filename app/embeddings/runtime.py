"""The process's embedder, chosen by settings."""

from __future__ import annotations

import functools
import logging
from concurrent.futures import Future, ThreadPoolExecutor

from app.core.config import get_settings
from app.embeddings.coalescing import CoalescingEmbedder
from app.embeddings.factory import get_embedder, model_ready
from app.embeddings.provider import Embedder

log = logging.getLogger(__name__)


def embedder() -> Embedder:
    settings = get_settings()
    return get_embedder(
        settings.embedding_provider,
        model_path=settings.embedding_model_path,
        api_url=settings.embedding_api_url,
        api_key=settings.embedding_api_key,
        api_model=settings.embedding_api_model,
        batch_size=settings.embedding_batch_size,
        num_threads=settings.embedding_threads,
        own_process=settings.embedding_process,
    )


def embed_soon(text: str) -> Future[list[float]]:
    """Start embedding ``text`` and return at once, so the caller can do other work (check
    the key, send reads that need no vector) while the model runs. Cancelling the future
    before the embedding starts skips it."""
    model = embedder()
    if isinstance(model, CoalescingEmbedder):
        return model.submit(text)
    return _requests_pool().submit(model.embed_one, text)


@functools.cache
def _requests_pool() -> ThreadPoolExecutor:
    # For embedders without a queue of their own (an HTTP provider): one call per thread.
    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="lethe-embed")


def ready() -> bool:
    try:
        return model_ready(embedder())
    except Exception:
        log.warning("embedding model not ready", exc_info=True)
        return False
