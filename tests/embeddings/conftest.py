"""Shared fixtures: the in-process MiniLM embedder and a real HTTP server
that speaks the OpenAI /embeddings protocol using that same model."""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest
import uvicorn
from fastapi import FastAPI, HTTPException, Request
from pydantic import BaseModel

from app.embeddings.local import LocalMiniLMEmbedder


@pytest.fixture(scope="session")
def local_embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder(batch_size=16)


class EmbeddingRequest(BaseModel):
    model: str
    input: list[str]


@dataclass
class FakeServer:
    base_url: str
    batch_sizes: list[int] = field(default_factory=list)
    auth_headers: list[str | None] = field(default_factory=list)

    def reset(self) -> None:
        self.batch_sizes.clear()
        self.auth_headers.clear()


def _build_app(state: FakeServer, embedder: LocalMiniLMEmbedder) -> FastAPI:
    app = FastAPI()
    rng = random.Random(1234)

    # The requested model name selects a failure mode, so one server
    # can exercise every error path without shared mutable switches.
    @app.post("/embeddings")
    def embeddings(body: EmbeddingRequest, request: Request) -> dict[str, object]:
        state.batch_sizes.append(len(body.input))
        state.auth_headers.append(request.headers.get("authorization"))
        if body.model == "fail-500":
            raise HTTPException(status_code=500, detail="boom")
        vectors = embedder.embed(body.input)
        if body.model == "wrong-dim":
            vectors = [v[:-1] for v in vectors]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        if body.model == "wrong-count":
            data = data[:-1]
        rng.shuffle(data)
        return {"object": "list", "model": body.model, "data": data}

    return app


@pytest.fixture(scope="session")
def fake_server(local_embedder: LocalMiniLMEmbedder) -> Iterator[FakeServer]:
    # Bind first and hand the socket to uvicorn: no race for a "free" port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    state = FakeServer(base_url=f"http://127.0.0.1:{port}/v1")
    app = FastAPI()
    app.mount("/v1", _build_app(state, local_embedder))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test embedding server did not start")
        time.sleep(0.02)
    yield state
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()
