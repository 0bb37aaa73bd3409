"""The embedding model is loaded before a process serves, and `/readyz` says so."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from fastapi.testclient import TestClient

from app.core.config import get_settings
from app.core.runtime import get_runtime
from app.embeddings import factory, local, model_process
from app.embeddings import runtime as embeddings


@pytest.fixture
def unloaded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """This process as if it had just started: no model in memory, no embedder built; and
    a count of the calls that embed anything but the startup's warm-up."""
    monkeypatch.setattr(local, "_MODELS", {})
    factory.get_embedder.cache_clear()
    calls: list[int] = []
    real = local.LocalMiniLMEmbedder.embed

    def counted(self: local.LocalMiniLMEmbedder, texts: Any) -> list[list[float]]:
        if list(texts) != ["warm-up"]:
            calls.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(local.LocalMiniLMEmbedder, "embed", counted)
    yield calls
    model = embeddings.embedder()
    inner = getattr(model, "inner", None)
    if isinstance(inner, model_process.ProcessEmbedder):
        inner.close()
    factory.get_embedder.cache_clear()


def test_the_api_loads_the_model_before_it_serves(unloaded: list[int]) -> None:
    from app.main import create_app

    app = create_app()
    assert not embeddings.loaded()
    with TestClient(app) as client:
        assert embeddings.loaded(), "loaded by the lifespan, before any request"
        assert unloaded == [], "no request embedded anything"
        ready = client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"]["embedding_model"] is True


def test_the_api_with_a_model_process_starts_and_warms_it_before_it_serves(
    unloaded: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.main import create_app

    monkeypatch.setattr(get_settings(), "embedding_process", True)
    with TestClient(create_app()) as client:
        child = embeddings.embedder().inner  # type: ignore[attr-defined]
        assert isinstance(child, model_process.ProcessEmbedder)
        assert child.loaded and child.child_pid is not None
        assert client.get("/readyz").json()["checks"]["embedding_model"] is True


def test_readyz_says_not_ready_until_the_model_is_loaded(unloaded: list[int]) -> None:
    from app.main import create_app

    client = TestClient(create_app())  # no lifespan: as if the load at startup had failed
    first = client.get("/readyz")
    assert first.status_code == 503
    assert first.json()["checks"]["embedding_model"] is False
    deadline = time.monotonic() + 120
    while not embeddings.loaded():  # the probe started a load in the background
        assert time.monotonic() < deadline, "the model was never reloaded"
        time.sleep(0.2)
    assert client.get("/readyz").status_code == 200


@pytest.mark.slow
def test_each_worker_process_loads_the_model_before_it_takes_a_task(tmp_path: Path) -> None:
    runtime = get_runtime()
    log_file = tmp_path / "worker.log"
    env = {**os.environ, "DATABASE_URL": runtime.owner_url,
           "LETHE_APP_DATABASE_URL": runtime.app_url, "CELERY_BROKER_URL": runtime.broker_url,
           "LETHE_EMBEDDING_PROCESS": "false"}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "app.core.celery_app", "worker",
         "--concurrency=2", "-Q", f"test-{uuid.uuid4().hex[:8]}", "--without-gossip",
         "--without-mingle", "--loglevel=INFO", f"--logfile={log_file}"],
        env=env,
    )
    try:
        deadline = time.monotonic() + 300
        loaded: set[int] = set()
        while len(loaded) < 2:
            assert worker.poll() is None, log_file.read_text()
            assert time.monotonic() < deadline, log_file.read_text()
            time.sleep(0.5)
            text = log_file.read_text() if log_file.exists() else ""
            loaded = {int(line.rsplit("(process ", 1)[1].split(")")[0])
                      for line in text.splitlines() if "embedding model" in line
                      and " loaded in " in line}
        children = {child.pid for child in psutil.Process(worker.pid).children()}
        assert loaded <= children, "each pool process loaded it, not the main one"
        assert "Timed out waiting for UP message" not in log_file.read_text()
    finally:
        worker.terminate()
        worker.wait(60)
