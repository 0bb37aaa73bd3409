from __future__ import annotations

import socket
from typing import Any

import pytest

from app.embeddings.local import LocalMiniLMEmbedder
from app.embeddings.openai_http import OpenAICompatibleEmbedder
from app.embeddings.provider import Embedder, EmbeddingError


def make(
    server: Any, model: str = "minilm", *, batch_size: int = 64, dimensions: int = 384
) -> OpenAICompatibleEmbedder:
    # Trailing slash on purpose: the client must not produce "//embeddings".
    return OpenAICompatibleEmbedder(
        server.base_url + "/", model, "s3cret", dimensions=dimensions, batch_size=batch_size
    )


def test_matches_local_and_respects_batches(
    fake_server: Any, local_embedder: LocalMiniLMEmbedder
) -> None:
    fake_server.reset()
    remote = make(fake_server, batch_size=7)
    assert isinstance(remote, Embedder)
    texts = [f"sentence number {i} about " + "things " * (i % 5) for i in range(40)]
    got = remote.embed(texts)
    want = local_embedder.embed(texts)
    assert len(got) == len(want) == 40
    for g, w in zip(got, want, strict=True):
        assert len(g) == 384
        assert max(abs(x - y) for x, y in zip(g, w, strict=True)) < 1e-5
    assert fake_server.batch_sizes == [7, 7, 7, 7, 7, 5]
    assert set(fake_server.auth_headers) == {"Bearer s3cret"}
    assert remote.embed([]) == []
    assert fake_server.batch_sizes == [7, 7, 7, 7, 7, 5]  # empty input: no request
    remote.close()


def test_embed_one(fake_server: Any, local_embedder: LocalMiniLMEmbedder) -> None:
    remote = make(fake_server)
    got = remote.embed_one("I live in Berlin")
    want = local_embedder.embed_one("I live in Berlin")
    assert max(abs(x - y) for x, y in zip(got, want, strict=True)) < 1e-5


def test_no_auth_header_without_key(fake_server: Any) -> None:
    fake_server.reset()
    OpenAICompatibleEmbedder(fake_server.base_url, "minilm", None).embed(["x"])
    assert fake_server.auth_headers == [None]


@pytest.mark.parametrize(
    ("model", "message"),
    [("fail-500", "HTTP 500"), ("wrong-dim", "384-dim"), ("wrong-count", "expected 3")],
)
def test_errors(fake_server: Any, model: str, message: str) -> None:
    with pytest.raises(EmbeddingError, match=message):
        make(fake_server, model).embed(["a", "b", "c"])


def test_dimension_mismatch_with_configured_size(fake_server: Any) -> None:
    with pytest.raises(EmbeddingError, match="768-dim"):
        make(fake_server, dimensions=768).embed(["a"])


def test_unreachable_server_raises_embedding_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = OpenAICompatibleEmbedder(f"http://127.0.0.1:{port}", "m", None, timeout=2)
    with pytest.raises(EmbeddingError, match="failed"):
        dead.embed(["a"])
