"""The local model in a child process: the same vectors, and a failed child never fails the
caller for longer than its own call."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import numpy as np
import pytest

from app.embeddings.coalescing import CoalescingEmbedder
from app.embeddings.factory import get_embedder
from app.embeddings.local import LocalMiniLMEmbedder
from app.embeddings.model_process import ProcessEmbedder
from app.embeddings.provider import EmbeddingError

TEXTS = ["I live in Lisbon, near the river.", "My locker code at the ZX-400 gym is 4471.",
         "Alice's blood type is AB negative."]


@pytest.fixture(scope="module")
def in_child() -> Iterator[ProcessEmbedder]:
    embedder = ProcessEmbedder(LocalMiniLMEmbedder(batch_size=16, num_threads=1))
    yield embedder
    embedder.close()


def test_the_child_gives_the_in_process_model_s_vectors(
    in_child: ProcessEmbedder, local_embedder: LocalMiniLMEmbedder
) -> None:
    got = in_child.embed(TEXTS)
    want = local_embedder.embed(TEXTS)
    assert len(got) == len(TEXTS) and all(len(v) == in_child.dimensions for v in got)
    for a, b in zip(got, want, strict=True):
        assert float(np.dot(a, b)) > 0.9999
    assert in_child.embed([]) == []
    with pytest.raises(TypeError):
        in_child.embed("one text")  # type: ignore[arg-type]
    assert in_child.child_pid is not None and in_child.child_pid != os.getpid()


def test_a_dead_child_is_replaced_and_the_call_still_answers(
    in_child: ProcessEmbedder,
) -> None:
    in_child.embed_one(TEXTS[0])
    first = in_child.child_pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    vector = in_child.embed_one(TEXTS[1])
    assert len(vector) == in_child.dimensions
    assert in_child.child_pid not in (None, first)


def test_a_child_that_does_not_answer_in_time_fails_that_call_only() -> None:
    slow = ProcessEmbedder(LocalMiniLMEmbedder(batch_size=16, num_threads=1), timeout=0.001)
    try:
        # The first call waits for the model to load: far longer than the timeout.
        with pytest.raises(EmbeddingError, match="no answer"):
            slow.embed_one(TEXTS[0])
        assert slow.child_pid is None  # stopped: a late answer would put the pipe out of step
        slow.timeout = 120
        assert len(slow.embed_one(TEXTS[0])) == slow.dimensions
    finally:
        slow.close()


def test_a_model_that_cannot_load_fails_each_call_with_the_reason() -> None:
    broken = ProcessEmbedder(LocalMiniLMEmbedder(model_path="/nonexistent/model", batch_size=4))
    try:
        with pytest.raises(EmbeddingError):
            broken.embed_one(TEXTS[0])
    finally:
        broken.close()


def test_the_factory_puts_the_child_behind_the_coalescing_queue() -> None:
    shared = get_embedder("local", model_path=None, api_url=None, api_key=None,
                          api_model="m", batch_size=8, own_process=True)
    assert isinstance(shared, CoalescingEmbedder) and isinstance(shared.inner, ProcessEmbedder)
    try:
        assert len(shared.embed_one(TEXTS[2])) == shared.dimensions
    finally:
        shared.inner.close()
