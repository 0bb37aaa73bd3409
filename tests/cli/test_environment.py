"""Which parts run the local model in a child process: the API by default, workers never."""

from __future__ import annotations

import pytest

from app.cli import api_environment, child_environment
from app.core.runtime import get_runtime


def test_the_api_embeds_in_a_child_process_unless_the_operator_says_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LETHE_EMBEDDING_PROCESS", raising=False)
    assert api_environment(get_runtime())["LETHE_EMBEDDING_PROCESS"] == "true"
    monkeypatch.setenv("LETHE_EMBEDDING_PROCESS", "false")
    assert api_environment(get_runtime())["LETHE_EMBEDDING_PROCESS"] == "false"


def test_workers_and_beat_keep_the_model_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_EMBEDDING_PROCESS", "true")
    assert child_environment(get_runtime())["LETHE_EMBEDDING_PROCESS"] == "false"


def test_serve_runs_beat_unless_told_this_machine_is_not_the_installations_one() -> None:
    from app.cli.processes import serve_parts

    every = serve_parts(get_runtime(), "127.0.0.1", 8000, 2, with_beat=True)
    assert sorted(every) == ["api", "beat", "worker"]
    assert "beat" in every["beat"][0]
    assert sorted(serve_parts(get_runtime(), "127.0.0.1", 8000, 2, with_beat=False)) == [
        "api", "worker"]


def test_the_api_runs_with_bounded_malloc_arenas_unless_the_operator_set_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    environment = api_environment(get_runtime())
    assert environment["MALLOC_ARENA_MAX"] == "2"
    assert environment["MALLOC_MMAP_THRESHOLD_"] == "131072"
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert api_environment(get_runtime())["MALLOC_ARENA_MAX"] == "4"
    # Workers were flat in the soak: they keep glibc's defaults.
    assert "MALLOC_ARENA_MAX" not in child_environment(get_runtime())
