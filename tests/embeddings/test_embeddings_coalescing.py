"""Single texts from many threads share model calls, and each caller gets its own vector."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from app.embeddings.coalescing import CoalescingEmbedder
from app.embeddings.local import LocalMiniLMEmbedder
from app.embeddings.provider import EmbeddingError


class CountingEmbedder:
    """The real model, recording the size of every call and slow enough to let a queue form."""

    def __init__(self, real: LocalMiniLMEmbedder, *, gate: threading.Event | None = None) -> None:
        self.real = real
        self.dimensions = real.dimensions
        self.name = real.name
        self.calls: list[int] = []
        self.gate = gate

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        if self.gate is not None:
            self.gate.wait(10)
        return self.real.embed(texts)

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


TEXTS = [f"Fact number {i}: the user keeps {i} plants on the balcony." for i in range(24)]


def test_concurrent_single_texts_share_calls_and_keep_their_own_vectors(
    local_embedder: LocalMiniLMEmbedder,
) -> None:
    gate = threading.Event()
    counting = CountingEmbedder(local_embedder, gate=gate)
    shared = CoalescingEmbedder(counting, max_batch=16)
    with ThreadPoolExecutor(len(TEXTS)) as pool:
        futures = [pool.submit(shared.embed_one, text) for text in TEXTS]
        # The first call holds the model until every other text has queued behind it.
        while sum(1 for f in futures if f.running()) < len(TEXTS):
            pass
        gate.set()
        vectors = [f.result(timeout=60) for f in futures]
    assert sum(counting.calls) == len(TEXTS)
    assert len(counting.calls) < len(TEXTS) and max(counting.calls) <= 16
    alone = local_embedder.embed(TEXTS)
    for got, want in zip(vectors, alone, strict=True):
        # The same text's vector, whichever batch it rode in (padding changes the last bits).
        assert float(np.dot(got, want)) > 0.9999


def test_a_lone_text_goes_straight_through(local_embedder: LocalMiniLMEmbedder) -> None:
    counting = CountingEmbedder(local_embedder)
    shared = CoalescingEmbedder(counting)
    for text in TEXTS[:3]:
        shared.embed_one(text)
    assert counting.calls == [1, 1, 1]
    assert shared.embed(TEXTS[:5]) == local_embedder.embed(TEXTS[:5])
    assert counting.calls == [1, 1, 1, 5]  # many texts go to the model directly, in one call


class FailingOnce:
    dimensions = 384
    name = "failing"

    def __init__(self) -> None:
        self.failed = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not self.failed:
            self.failed = True
            raise EmbeddingError("model crashed")
        return [[0.0] * 384 for _ in texts]

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


def test_a_failed_call_fails_its_callers_and_the_next_call_works() -> None:
    shared = CoalescingEmbedder(FailingOnce())
    with pytest.raises(EmbeddingError, match="crashed"):
        shared.embed_one("first")
    assert shared.embed_one("second") == [0.0] * 384
    with pytest.raises(TypeError):
        shared.embed_one(["not", "a", "str"])  # type: ignore[arg-type]


class RefusingPoison:
    """Fails any call that contains the text "poison"."""

    dimensions = 384
    name = "picky"

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.gate.wait(10)
        if "poison" in texts:
            raise EmbeddingError("cannot embed poison")
        return [[float(len(text))] * 384 for text in texts]

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


def test_one_failing_text_fails_only_its_own_caller() -> None:
    gate = threading.Event()
    shared = CoalescingEmbedder(RefusingPoison(gate))
    texts = ["first", "poison", "third", "fourth"]
    with ThreadPoolExecutor(len(texts)) as pool:
        futures = [pool.submit(shared.embed_one, text) for text in texts]
        while sum(1 for f in futures if f.running()) < len(texts):
            pass
        gate.set()
        with pytest.raises(EmbeddingError, match="poison"):
            futures[1].result(timeout=30)
        for text, future in zip(texts, futures, strict=True):
            if text != "poison":
                assert future.result(timeout=30) == [float(len(text))] * 384


def test_a_text_cancelled_while_queued_is_never_embedded(
    local_embedder: LocalMiniLMEmbedder,
) -> None:
    """Recall starts embedding before the key is checked and cancels on refusal: a queued
    text whose future was cancelled drops out of the next call."""
    gate = threading.Event()
    counting = CountingEmbedder(local_embedder, gate=gate)
    shared = CoalescingEmbedder(counting, max_batch=16)
    first = shared.submit(TEXTS[0])
    while not first.running():
        pass
    refused, kept = shared.submit(TEXTS[1]), shared.submit(TEXTS[2])
    assert refused.cancel()
    gate.set()
    assert len(kept.result(timeout=60)) == local_embedder.dimensions
    assert len(first.result(timeout=60)) == local_embedder.dimensions
    assert refused.cancelled() and counting.calls == [1, 1]
