"""One real worker for the fault modules on the embedded broker: each start loads the
embedding model in every pool process, the largest cost of these tests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.core import faults
from app.core.runtime import get_runtime
from app.webhooks.service import DELIVER_TASK
from tests.faults.helpers import WEBHOOK_TIMEOUT, WEBHOOK_WAITS, lethe_env, worker
from tests.webhooks.helpers import webhook_settings


@dataclass
class SharedWorker:
    """A prefork worker with two pool processes; its crash after a webhook delivery's commit
    is armed while ``crash_marker`` is absent."""

    process: subprocess.Popen[bytes]
    log: Path
    crash_marker: Path

    def mark(self) -> int:
        """Where the log ends now: a test reads only what its own runs wrote."""
        return len(self.log.read_text(errors="replace"))

    def output(self, since: int = 0) -> str:
        return self.log.read_text(errors="replace")[since:]


# Package scope: stopped after the last fault test, so later tests' workers alone read the
# broker.
@pytest.fixture(scope="package")
def shared_worker(database: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
                  ) -> Iterator[SharedWorker]:
    folder = tmp_path_factory.mktemp("faults-worker")
    marker, log = folder / "crashed", folder / "worker.log"
    marker.touch()  # present: disarmed
    runtime = get_runtime()
    with webhook_settings(allow_private="true", timeout_seconds=str(WEBHOOK_TIMEOUT),
                          retry_seconds=str(WEBHOOK_WAITS)):
        env = lethe_env(DATABASE_URL=runtime.owner_url, LETHE_APP_DATABASE_URL=runtime.app_url,
                        CELERY_BROKER_URL=runtime.broker_url,
                        **faults.armed_for(DELIVER_TASK, str(marker)))
    with worker(env, log, concurrency=2) as process:
        yield SharedWorker(process, log, marker)
