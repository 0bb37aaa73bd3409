"""A real HTTP receiver on 127.0.0.1 for webhook deliveries, and the plumbing around it."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook

from app.core.config import get_settings


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Answers each POST with the next status of ``answers`` (the last one repeats)."""

    url: str
    answers: list[int] = field(default_factory=lambda: [204])
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, count: int, timeout: float = 60.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.1)
        raise AssertionError(f"{len(self.received)} deliveries received, wanted {count}")

    def verified(self, secret: str) -> list[dict[str, Any]]:
        """Every delivery checked by the receiver's own Standard Webhooks verification."""
        checker = Webhook(secret)
        with self.lock:
            return [checker.verify(r.body, r.headers) for r in self.received]


@contextmanager
def receiver(answers: list[int] | None = None,
             on_post: Callable[[int, int], None] | None = None) -> Iterator[Receiver]:
    """A receiver on a free port; ``on_post(n, port)`` runs when the n-th POST (from 1) has
    been recorded, before it is answered (a test's fault: kill the sender, hang…); ``port``
    is the sender's TCP port, which names its process."""
    state: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            target = state["receiver"]
            with target.lock:
                target.received.append(Received(self.path, dict(self.headers.items()), raw))
                status = target.answers[min(len(target.received), len(target.answers)) - 1]
                count = len(target.received)
            if on_post is not None:
                on_post(count, self.client_address[1])
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["receiver"] = Receiver(url=f"http://127.0.0.1:{server.server_port}/hooks/lethe",
                                 answers=answers or [204])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state["receiver"]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def webhook_settings(**values: str) -> Iterator[None]:
    """Process settings for webhooks (``allow_private="true"``…), restored afterwards."""
    names = {f"LETHE_WEBHOOKS_{name.upper()}": value for name, value in values.items()}
    before = {name: os.environ.get(name) for name in names}
    os.environ.update(names)
    get_settings.cache_clear()
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        get_settings.cache_clear()


def register(client: Any, tenant: dict[str, Any], url: str, events: list[str]) -> dict[str, Any]:
    response = client.post("/v1/webhooks", json={"url": url, "events": events},
                           headers=tenant["compliance"])
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def deliver_pending(owner_conn: Any) -> list[str | None]:
    """Run `webhooks.deliver` in this process for every pending delivery, oldest first."""
    from app.webhooks.tasks import deliver

    rows = owner_conn.execute(
        "SELECT id, tenant_id FROM webhook_delivery WHERE status = 'pending' "
        "ORDER BY created_at, id").fetchall()
    return [deliver(str(row[0]), str(row[1])) for row in rows]


def remember(client: Any, tenant: dict[str, Any], text: str, subject: str = "user:1",
             derived_from: list[str] | None = None) -> str:
    body: dict[str, Any] = {"subject": subject, "text": text}
    if derived_from:
        body["derived_from"] = derived_from
    response = client.post("/v1/memories", json=body, headers=tenant["app"])
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id


def new_key() -> str:
    return uuid.uuid4().hex
