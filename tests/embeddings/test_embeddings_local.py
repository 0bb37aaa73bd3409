from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from app.embeddings import local
from app.embeddings.local import LocalMiniLMEmbedder, load_model
from app.embeddings.provider import Embedder


def cosine(a: list[float], b: list[float]) -> float:
    va, vb = np.asarray(a), np.asarray(b)
    return float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))


def test_offline_unit_vectors_and_semantics(local_embedder: LocalMiniLMEmbedder) -> None:
    assert isinstance(local_embedder, Embedder)
    home, home2, invoice = local_embedder.embed(
        ["I live in Berlin", "My home is in Berlin", "The invoice is overdue"]
    )
    for vector in (home, home2, invoice):
        assert len(vector) == local_embedder.dimensions == 384
        assert all(isinstance(x, float) for x in vector)
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert cosine(home, home2) > cosine(home, invoice) + 0.2


def test_empty_input_and_bare_string(local_embedder: LocalMiniLMEmbedder) -> None:
    assert local_embedder.embed([]) == []
    with pytest.raises(TypeError):
        local_embedder.embed("not a list")


def test_batching_preserves_order(local_embedder: LocalMiniLMEmbedder) -> None:
    assert local_embedder.batch_size == 16
    # Varying lengths so that padding differs between batches.
    texts = [f"memory {i}: " + "note " * (i % 13) + f"item {i * 7}" for i in range(150)]
    batched = local_embedder.embed(texts)
    assert len(batched) == 150
    for text, vector in zip(texts, batched, strict=True):
        np.testing.assert_allclose(vector, local_embedder.embed_one(text), atol=1e-5)


def test_model_loaded_once_per_process() -> None:
    a, b = LocalMiniLMEmbedder(), LocalMiniLMEmbedder(batch_size=8)
    assert a.model is b.model is load_model()


def test_concurrent_first_load_constructs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = local._construct

    def slow_construct(path: str, device: str) -> object:
        calls.append(path)
        time.sleep(0.2)  # widen the race window
        return real(path, device)

    # Pretend nothing is loaded yet; monkeypatch restores the cache afterwards.
    monkeypatch.setattr(local, "_MODELS", {})
    monkeypatch.setattr(local, "_construct", slow_construct)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(load_model())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(results) == 8 and all(r is results[0] for r in results)


def resident_kb(path: Path) -> int:
    """KB of ``path``'s mappings in this process that are resident (Linux smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
            inside = len(fields) >= 6 and fields[5] == str(path)
        elif inside and fields[0] == "Rss:":
            total += int(fields[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux only")
def test_loaded_model_has_every_weight_resident() -> None:
    """The weights file is mapped; once the model is loaded all of it is resident, not only the
    pages the texts so far happened to read, so the process does not grow afterwards as new
    words read new rows of the embedding matrix."""
    load_model()
    weights = (Path(local.default_model_path()) / "model.safetensors").resolve()
    assert resident_kb(weights) * 1024 >= 0.95 * weights.stat().st_size
