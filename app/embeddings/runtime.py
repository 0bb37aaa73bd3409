"""The process's embedder, chosen by settings, and loaded before the process serves.

Loading the local model takes seconds (tens on a busy machine). A process that embeds loads it
before it takes work, so no request or task pays for it: the API in its lifespan (before
uvicorn listens; with `LETHE_EMBEDDING_PROCESS` that starts the model's child process and
waits for it), and each Celery worker process as it starts (`worker_process_init`: the pool
sends it a task only once the process reports up, which is after its handlers return).
`/readyz` reports the model ready only once it is loaded and answers.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from celery.signals import worker_process_init

from app.core.config import get_settings
from app.embeddings.coalescing import CoalescingEmbedder
from app.embeddings.factory import get_embedder, model_ready
from app.embeddings.provider import Embedder, Preloadable

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


def load() -> None:
    """Load the embedding model now and run it once (at once if it is loaded already)."""
    model = embedder()
    if not isinstance(model, Preloadable) or model.loaded:
        return
    started = time.monotonic()
    model.load()
    log.info("embedding model %s loaded in %.1f s (process %d)", model.name,
             time.monotonic() - started, os.getpid())


def loaded() -> bool:
    """No call of this process's embedder will wait for a model to load."""
    model = embedder()
    return not isinstance(model, Preloadable) or model.loaded


def load_or_log() -> None:
    """`load`, for a process starting up: a model that fails to load is logged, and
    `/readyz` keeps saying so (and tries again) instead of the process refusing to start."""
    try:
        load()
    except Exception:
        log.exception("the embedding model failed to load")


def ready() -> bool:
    """The model is loaded and answers a probe. Not loaded (it failed at startup, or its
    child process died), it is reloaded in the background and this says no meanwhile."""
    try:
        if not loaded():
            _reload_soon()
            return False
        return model_ready(embedder())
    except Exception:
        log.warning("embedding model not ready", exc_info=True)
        return False


_reloading: list[Future[None]] = []  # at most one reload at a time
_reloading_lock = threading.Lock()


def _reload_soon() -> None:
    with _reloading_lock:
        if _reloading and not _reloading[0].done():
            return
        _reloading[:] = [_requests_pool().submit(load_or_log)]


@worker_process_init.connect
def _load_in_worker_process(**_: Any) -> None:
    # Connected wherever this module is imported: in a worker, by the task modules that
    # embed, in the main process before the pool forks its processes.
    load_or_log()
