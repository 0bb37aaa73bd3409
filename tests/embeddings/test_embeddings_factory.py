from __future__ import annotations

from typing import Any

import pytest

from app.embeddings.coalescing import CoalescingEmbedder
from app.embeddings.factory import get_embedder, model_ready
from app.embeddings.local import LocalMiniLMEmbedder
from app.embeddings.openai_http import OpenAICompatibleEmbedder

DEFAULTS: dict[str, object] = dict(
    model_path=None, api_url=None, api_key=None, api_model="m", batch_size=32
)


def test_local_built_once_and_ready() -> None:
    a = get_embedder("local", **DEFAULTS)
    b = get_embedder("local", **DEFAULTS)
    assert a is b and isinstance(a, CoalescingEmbedder)
    assert isinstance(a.inner, LocalMiniLMEmbedder) and a.inner.batch_size == 32
    assert a.max_batch == 32
    assert model_ready(a)


def test_openai_provider(fake_server: Any) -> None:
    args = {**DEFAULTS, "api_url": fake_server.base_url, "api_model": "minilm"}
    e = get_embedder("openai", **args)
    assert isinstance(e, OpenAICompatibleEmbedder)
    assert get_embedder("openai", **args) is e
    assert model_ready(e)
    broken = get_embedder("openai", **{**args, "api_model": "fail-500"})
    assert not model_ready(broken)


def test_invalid_configuration() -> None:
    with pytest.raises(ValueError, match="unknown"):
        get_embedder("cohere", **DEFAULTS)
    with pytest.raises(ValueError, match="api_url"):
        get_embedder("openai", **DEFAULTS)
