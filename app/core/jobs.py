"""Background jobs a unit of work sends once its transaction has committed.

A service that starts background work calls `enqueue_job("<domain>.<action>", *ids)`; the unit
of work it runs in (`app.core.uow`) holds the queue in a context variable and sends every job
only after its commit. So a worker never looks for a row that is not there yet, and work that
rolls back sends nothing. Jobs are named, not imported, so a service never imports a task
module (which imports the service).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from uuid import UUID

from app.core.celery_app import celery_app

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    task: str
    args: tuple[str, ...]


class JobQueue:
    """The jobs one unit of work asked for, in order."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def enqueue(self, task: str, *args: str | UUID) -> None:
        self.jobs.append(Job(task, tuple(str(arg) for arg in args)))

    def send(self) -> None:
        """Send every job (after the commit). A job that cannot be sent is logged, not raised:
        what asked for it is durable, and its operation stays queued for a later send."""
        jobs, self.jobs = self.jobs, []
        for job in jobs:
            try:
                celery_app.send_task(job.task, args=list(job.args))
            except Exception:
                log.exception("could not send %s %s; its operation stays queued", job.task,
                              job.args[:1])


_current: ContextVar[JobQueue | None] = ContextVar("lethe_job_queue", default=None)


@contextmanager
def collecting(queue: JobQueue | None = None) -> Iterator[JobQueue]:
    """Jobs enqueued inside go to ``queue`` (a new one by default); the caller sends it."""
    queue = queue if queue is not None else JobQueue()
    token = _current.set(queue)
    try:
        yield queue
    finally:
        _current.reset(token)


def enqueue_job(task: str, *args: str | UUID) -> None:
    """Send the task ``task`` with ``args`` once the current unit of work has committed."""
    queue = _current.get()
    if queue is None:
        raise RuntimeError(f"{task} enqueued outside a unit of work: nothing would send it")
    queue.enqueue(task, *args)
