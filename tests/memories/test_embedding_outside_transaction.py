"""Embedding text holds no database connection: a slow model must not pin the pool."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from app.core import db
from app.embeddings.runtime import embedder


class PoolWatchingEmbedder:
    """Delegates to the real model and records how many connections were checked out."""

    def __init__(self) -> None:
        self.real = embedder()
        self.dimensions = self.real.dimensions
        self.name = self.real.name
        self.checked_out: list[int] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.checked_out.append(db.app_engine().pool.checkedout())  # type: ignore[attr-defined]
        return self.real.embed(texts)

    def embed_one(self, text: str) -> list[float]:
        self.checked_out.append(db.app_engine().pool.checkedout())  # type: ignore[attr-defined]
        return self.real.embed_one(text)


@pytest.fixture
def watcher(monkeypatch: pytest.MonkeyPatch) -> PoolWatchingEmbedder:
    spy = PoolWatchingEmbedder()
    monkeypatch.setattr("app.memories.service.embedder", lambda: spy)
    return spy


def test_writes_embed_with_no_connection_held(
    client: Any, tenant: dict[str, Any], watcher: PoolWatchingEmbedder
) -> None:
    headers = {**tenant["app"], "Idempotency-Key": "embed-1"}
    created = client.post("/v1/memories", json={"subject": "u", "text": "I like figs."},
                          headers=headers)
    assert created.status_code == 201
    patched = client.patch(f"/v1/memories/{created.json()['id']}", json={"text": "I love figs."},
                           headers={**tenant["app"], "If-Match": '"1"'})
    assert patched.status_code == 200
    assert watcher.checked_out == [0, 0]
    # Recall reads what needs no vector while its query embeds, and holds no connection
    # while it waits for the vector: tests/recall/test_api.py.
