"""`docs/api.md` is the HTTP contract as shipped, identical to the copy it is kept from:
`../shared/API.md` beside the repository's root, where it exists (a clone alone has none)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _roots() -> list[Path]:
    """This checkout's root, and the main checkout's when this one is a linked worktree."""
    roots = [REPO]
    try:
        common = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--path-format=absolute", "--git-common-dir"],
            capture_output=True, text=True, timeout=30)
    except OSError:
        return roots
    if common.returncode == 0 and common.stdout.strip():
        roots.append(Path(common.stdout.strip()).parent)
    return roots


def test_docs_api_md_is_the_shared_contract() -> None:
    shared = [root.parent / "shared" / "API.md" for root in _roots()
              if (root.parent / "shared" / "API.md").is_file()]
    if not shared:
        pytest.skip("no ../shared/API.md beside the repository")
    assert (REPO / "docs" / "api.md").read_bytes() == shared[0].read_bytes(), (
        f"docs/api.md differs from {shared[0]}: copy it over")
