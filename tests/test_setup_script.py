"""`scripts/setup` chooses torch's CPU build: a local wheel first (no network at all), then
PyTorch's CPU index, the default index last. Its choice is driven here with a fake pip."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Logs its arguments; succeeds for the sources the test says are there.
FAKE_PIP = """#!/usr/bin/env bash
echo "$*" >> "$PIP_LOG"
case "$*" in
  *--no-index*) [ -n "${LOCAL_WHEEL:-}" ] ;;
  *--index-url*) [ -n "${CPU_INDEX_UP:-}" ] ;;
  *) true ;;
esac
"""


def _choose_torch(tmp_path: Path, *, local_wheel: bool, cpu_index_up: bool) -> list[str]:
    """The pip commands `choose_torch` ran, in order."""
    pip = tmp_path / "pip"
    pip.write_text(FAKE_PIP)
    pip.chmod(0o755)
    log = tmp_path / "pip.log"
    env = {"PATH": "/usr/bin:/bin", "SETUP_PIP": str(pip), "PIP_LOG": str(log),
           "LOCAL_WHEEL": "1" if local_wheel else "", "CPU_INDEX_UP": "1" if cpu_index_up else ""}
    done = subprocess.run(["bash", "-c", f'source "{SETUP}" && choose_torch'], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def test_a_local_wheel_is_installed_without_asking_any_index(tmp_path: Path) -> None:
    calls = _choose_torch(tmp_path, local_wheel=True, cpu_index_up=True)
    assert len(calls) == 1 and "--no-index" in calls[0] and "torch==2.13.0" in calls[0]
    assert CPU_INDEX not in calls[0]


def test_without_a_local_wheel_the_cpu_index_comes_before_the_default_one(
    tmp_path: Path,
) -> None:
    calls = _choose_torch(tmp_path, local_wheel=False, cpu_index_up=True)
    assert len(calls) == 2 and f"--index-url {CPU_INDEX}" in calls[1]
    assert "--timeout" in calls[1] and "torch==2.13.0" in calls[1]


def test_the_default_index_is_the_last_resort(tmp_path: Path) -> None:
    calls = _choose_torch(tmp_path, local_wheel=False, cpu_index_up=False)
    assert len(calls) == 3 and calls[2].split() == ["install", "--quiet", "torch==2.13.0"]


@pytest.mark.parametrize(("version", "cuda", "named"), [
    ("2.13.0+cpu", None, "torch 2.13.0+cpu (CPU)"),
    ("2.13.0", "12.8", "torch 2.13.0 (CUDA)"),
], ids=["cpu", "cuda"])
def test_setup_names_the_build_it_installed(tmp_path: Path, version: str, cuda: str | None,
                                            named: str) -> None:
    # A stand-in torch package: importing the real one takes seconds.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        f"import types\n__version__ = {version!r}\n"
        f"version = types.SimpleNamespace(cuda={cuda!r})\n")
    done = subprocess.run(["bash", "-c", f'source "{SETUP}" && torch_build "{sys.executable}"'],
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == named


def test_the_setup_script_is_valid_bash() -> None:
    assert subprocess.run(["bash", "-n", str(SETUP)], timeout=30).returncode == 0
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed")
    checked = subprocess.run([shellcheck, str(SETUP)], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stdout
