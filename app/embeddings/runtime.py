"""The process's embedder, chosen by settings."""

from __future__ import annotations

import logging

from app.core.config import get_settings
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
    )


def ready() -> bool:
    try:
        return model_ready(embedder())
    except Exception:
        log.warning("embedding model not ready", exc_info=True)
        return False
