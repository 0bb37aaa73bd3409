"""TEST-ONLY fault injection: a worker killed after a task's commit, before the broker's ack.

`LETHE_FAULT_CRASH_AFTER_COMMIT` holds ``<task name>=<marker file>``. The first time that task
reaches the point after its commit while the marker file does not exist, the file is created
and the process SIGKILLs itself, so a test proves that a delivery which committed but was
never acknowledged comes back and changes nothing. Unset in every real deployment; the
marker makes it fire once however many processes share the variable.
"""

from __future__ import annotations

import os
import signal

FAULT_CRASH_AFTER_COMMIT = "LETHE_FAULT_CRASH_AFTER_COMMIT"


def crash_after_commit(task: str) -> None:
    """Die here, once, if a test asked for it for ``task``."""
    armed = os.environ.get(FAULT_CRASH_AFTER_COMMIT)
    if not armed:
        return
    name, _, marker = armed.partition("=")
    if name != task or not marker:
        return
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def armed_for(task: str, marker: str) -> dict[str, str]:
    """The environment that arms the crash for ``task`` (absent marker = armed)."""
    return {FAULT_CRASH_AFTER_COMMIT: f"{task}={marker}"}
