"""Each key test gets a key store of its own (`LETHE_KEY_STORE` in a fresh folder)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def store_folder(tmp_path: Path) -> Iterator[Path]:
    from app.core.config import get_settings
    from app.keys import subjects

    folder = tmp_path / "keys"
    previous = os.environ.get("LETHE_KEY_STORE")
    os.environ["LETHE_KEY_STORE"] = str(folder)
    get_settings.cache_clear()
    subjects.forget_cached()
    yield folder
    if previous is None:
        os.environ.pop("LETHE_KEY_STORE", None)
    else:
        os.environ["LETHE_KEY_STORE"] = previous
    get_settings.cache_clear()
    subjects.forget_cached()
