"""The HTTP layer of a real uvicorn server, run as `lethe serve` runs it: what its parser
refuses is problem+json too, and a 500 tells a keep-alive client the connection is done."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from app.core.http_protocol import ProblemHTTPProtocol

PROBLEM = "application/problem+json"


@pytest.fixture
def server(database: Any) -> Iterator[int]:
    from app.main import create_app

    app = create_app()

    @app.get("/boom", include_in_schema=False)
    def boom() -> None:
        raise RuntimeError("boom")

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off",
                            http=ProblemHTTPProtocol, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield port
    running.should_exit = True
    thread.join(timeout=10)


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_control_character_in_the_idempotency_key_is_problem_400(server: int) -> None:
    answer = _raw(server, b"POST /v1/memories HTTP/1.1\r\nHost: lethe\r\n"
                          b"Idempotency-Key: key\x01one\r\nContent-Length: 2\r\n\r\n{}")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert f"content-type: {PROBLEM}".encode() in head.lower()
    problem = json.loads(body)
    assert problem["status"] == 400
    assert problem["type"] == "https://lethe.dev/problems/bad-request"


def test_a_malformed_request_line_is_problem_400(server: int) -> None:
    head, _, body = _raw(server, b"GARBAGE\r\n\r\n").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert json.loads(body)["status"] == 400


def test_after_a_500_the_client_is_told_to_reconnect(server: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=10)
    try:
        conn.request("GET", "/boom")
        failed = conn.getresponse()
        assert failed.status == 500
        assert failed.getheader("content-type", "").startswith(PROBLEM)
        assert failed.getheader("connection") == "close"
        failed.read()
        # http.client honours `Connection: close` and opens a new connection: no reset.
        conn.request("GET", "/v1/receipts/public-key")
        again = conn.getresponse()
        assert again.status == 200
        again.read()
    finally:
        conn.close()
