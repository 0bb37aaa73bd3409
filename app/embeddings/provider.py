"""The embedding interface every provider implements."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable


class EmbeddingError(RuntimeError):
    """An embedding backend failed or returned something unusable."""


@runtime_checkable
class Embedder(Protocol):
    dimensions: int
    name: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order; [] for empty input."""
        ...

    def embed_one(self, text: str) -> list[float]: ...


@runtime_checkable
class Preloadable(Protocol):
    """An embedder with a model to load before it answers fast (the local one)."""

    @property
    def loaded(self) -> bool:
        """The model is in memory and has run once: the next call pays no load."""
        ...

    def load(self) -> None:
        """Load the model and run it once; at once if it is loaded already."""
        ...


# What `load` embeds: the first forward pass sets up more than the model's weights.
WARM_UP_TEXT = "warm-up"


def batches(texts: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    # A bare str is a Sequence[str] too; embedding it character by character
    # is never what the caller meant, so fail loudly instead.
    if isinstance(texts, str):
        raise TypeError("embed() expects a sequence of strings, not a single str")
    if size < 1:
        raise ValueError("batch_size must be >= 1")
    for start in range(0, len(texts), size):
        yield texts[start : start + size]
