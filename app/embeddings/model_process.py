"""The local model in a process of its own, for the API.

A forward pass of MiniLM over a short query is mostly Python that holds the GIL. In the API
process, the request threads that check a key or read the database while a query embeds
waited for it (a key check took 3 ms beside an embedding instead of 0.3), and the model
waited for them. In a child process the two run side by side on two cores. Texts go to the
child over a pipe; vectors come back as float32 bytes.

The child is started by `load` (the API calls it before it serves) or on first use, with
`spawn` (a fork of a process running threads and torch is unsafe), and again after it dies,
fails to answer in time, or when this process is itself a fork of the one that started it. It
exits when the pipe closes, so it never outlives the API.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import numpy as np

from app.embeddings.local import LocalMiniLMEmbedder
from app.embeddings.provider import WARM_UP_TEXT, EmbeddingError

log = logging.getLogger(__name__)

# Long enough for the first call, which waits for the child to load the model.
ANSWER_TIMEOUT = 120.0


class ProcessEmbedder:
    """``model`` run in a child: an unloaded `LocalMiniLMEmbedder` (it loads on first use),
    sent to the child as it is, so path, batch size and threads are checked in one place."""

    def __init__(self, model: LocalMiniLMEmbedder, *, timeout: float = ANSWER_TIMEOUT) -> None:
        self.model = model
        self.timeout = timeout
        self.dimensions = model.dimensions
        self.name = model.name
        self._lock = threading.Lock()
        self._child: BaseProcess | None = None
        self._conn: Connection | None = None
        self._owner_pid = 0
        self._answered = False  # the running child has embedded: its model is in memory

    @property
    def loaded(self) -> bool:
        child = self._child
        return (self._answered and child is not None and self._owner_pid == os.getpid()
                and child.is_alive())

    def load(self) -> None:
        self.embed_one(WARM_UP_TEXT)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if isinstance(texts, str):
            raise TypeError("embed() expects a sequence of strings, not a single str")
        batch = list(texts)
        if not batch:
            return []
        with self._lock:
            ok, payload = self._ask(batch)
        if not ok:
            raise EmbeddingError(str(payload))
        assert isinstance(payload, bytes)
        vectors = np.frombuffer(payload, dtype=np.float32).reshape(len(batch), self.dimensions)
        return vectors.tolist()

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def _ask(self, batch: list[str]) -> tuple[bool, bytes | str]:
        # A child found dead is replaced and asked again, once: embedding has no side effect.
        # One that does not answer in time is not asked again (it would only wait again).
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.send(batch)
                if not conn.poll(self.timeout):
                    raise TimeoutError(f"no answer in {self.timeout:g} s")
                answer: tuple[bool, bytes | str] = conn.recv()
                self._answered = self._answered or answer[0]
                return answer
            except (EOFError, OSError, TimeoutError) as exc:
                # The pipe may still carry a late answer: only a new child is in step.
                self._stop()
                if attempt == 2 or isinstance(exc, TimeoutError):
                    raise EmbeddingError(f"the embedding process failed: {exc!r}") from exc
                log.warning("the embedding process died (%r); starting another", exc)
        raise AssertionError("unreachable")

    @property
    def child_pid(self) -> int | None:
        """The running child's PID (None before the first call or after a failure)."""
        return self._child.pid if self._child is not None else None

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _connection(self) -> Connection:
        alive = (self._child is not None and self._owner_pid == os.getpid()
                 and self._child.is_alive())
        if alive and self._conn is not None:
            return self._conn
        self._stop()
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        child = context.Process(
            target=_serve, args=(theirs, self.model),
            name="lethe-embedding", daemon=True)
        child.start()
        theirs.close()  # the child holds its end; ours sees EOF if it dies
        self._child, self._conn, self._owner_pid = child, ours, os.getpid()
        log.info("embedding process %s started", child.pid)
        return ours

    def _stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._child is not None and self._owner_pid == os.getpid():
            self._child.kill()
            self._child.join(10)
        self._child = self._conn = None
        self._answered = False


def _serve(conn: Connection, model: LocalMiniLMEmbedder) -> None:
    # A terminal's Ctrl-C reaches the whole process group; the API decides when to stop, and
    # its exit closes the pipe, which ends this loop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            texts = conn.recv()
        except (EOFError, OSError):
            return
        answer: tuple[bool, bytes | str]
        try:
            answer = (True, np.asarray(model.embed(texts), dtype=np.float32).tobytes())
        except Exception as exc:  # one bad call must not end the child
            answer = (False, f"{type(exc).__name__}: {exc}")
        conn.send(answer)
