"""The container files, checked without a container engine: the Dockerfile passes hadolint and
keeps its promises (multi-stage, non-root, no compiler in the final stage, the model inside),
and compose brings every long-running part up behind a health check, in order."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

DOCKER = Path(__file__).resolve().parents[2] / "docker"
LONG_RUNNING = ("db", "redis", "api", "worker", "beat")


def _stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuation lines joined), one list per stage."""
    text = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text())
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


def _compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_dockerfile_passes_hadolint() -> None:
    # The dev extras put it beside the interpreter, which may not be on PATH.
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
        "hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (the dev extras install it)")
    result = subprocess.run([hadolint, str(DOCKER / "Dockerfile")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_is_built_in_stages_and_runs_as_a_user_without_a_compiler() -> None:
    stages = _stages()
    assert len(stages) >= 2
    final = stages[-1]
    users = [line.split()[1] for line in final if line.upper().startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    installs = " ".join(line for line in final if line.upper().startswith("RUN "))
    for compiler in ("gcc", "g++", "build-essential", "clang"):
        assert not re.search(rf"\b{re.escape(compiler)}\b", installs), compiler
    # Dependencies come from the build stage, not a fresh install in the final one.
    assert any(line.startswith("COPY --from=") for line in final)
    # The packaged model is loaded offline while building, so an image without it fails there.
    assert "load_model()" in installs
    env = " ".join(line for line in final if line.upper().startswith("ENV "))
    assert "HF_HUB_OFFLINE=1" in env


def test_compose_runs_every_long_running_part_behind_a_health_check() -> None:
    services = _compose()["services"]
    assert set(LONG_RUNNING) | {"migrate"} <= set(services)
    for name in LONG_RUNNING:
        check = services[name].get("healthcheck") or {}
        assert not check.get("disable"), name
        assert check.get("test"), name
    # The worker's check goes through the broker to this very worker.
    assert "inspect ping" in " ".join(services["worker"]["healthcheck"]["test"])


def test_compose_starts_the_parts_in_order() -> None:
    services = _compose()["services"]
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    for name in ("api", "worker", "beat"):
        needs = services[name]["depends_on"]
        assert needs["migrate"]["condition"] == "service_completed_successfully", name
        assert needs["redis"]["condition"] == "service_healthy", name
    # Two beats would fire every scheduled job twice.
    assert services["beat"]["deploy"]["replicas"] == 1


def test_every_lethe_container_shares_one_key_store() -> None:
    """A container with a key store of its own would find no tenant's key (503) or, worse,
    `migrate` would write them into a store that vanishes when it exits."""
    compose = _compose()
    store = compose["x-lethe-environment"]["LETHE_KEY_STORE"]
    for name in ("migrate", "api", "worker", "beat"):
        service = compose["services"][name]
        assert f"keystore:{store}" in service["volumes"], name
        assert service["environment"]["LETHE_KEY_STORE"] == store, name
    assert "keystore" in compose["volumes"]


def test_the_readme_signs_staff_in_with_a_command_the_image_runs() -> None:
    """Staff sign in with an email and a password: the README creates the first officer with
    `lethe staff create` in the `api` container, with options that command takes."""
    import typer

    from app.cli.main import cli

    readme = (DOCKER / "README.md").read_text()
    command = re.search(r"exec (\w+) \\\n\s+lethe (staff create [^\n]+)", readme)
    assert command is not None, "no `lethe staff create` run in a container"
    assert command.group(1) in _compose()["services"]
    words = command.group(2).split()
    group: Any = typer.main.get_command(cli)
    staff = group.get_command(group.make_context("lethe", [words[0]]), words[0])
    create = staff.get_command(staff.make_context("staff", [words[1]]), words[1])
    parsed = create.make_context("create", words[2:])  # raises on an unknown or missing option
    assert parsed.params["role"] == "officer"
    assert "/console/login" in readme
    assert "log in with the compliance key" not in readme
