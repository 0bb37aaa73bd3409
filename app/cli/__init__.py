"""The `lethe` command (`main`), and how it starts the installation's processes."""

from app.cli.main import main
from app.cli.processes import (
    api_command,
    api_environment,
    beat_command,
    child_environment,
    worker_command,
    worker_environment,
)

__all__ = ["api_command", "api_environment", "beat_command", "child_environment", "main",
           "worker_command", "worker_environment"]
