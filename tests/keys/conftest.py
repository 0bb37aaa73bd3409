"""Each key test gets a key store of its own (`LETHE_KEY_STORE` in a fresh folder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.keys.helpers import own_key_store


@pytest.fixture
def store_folder(tmp_path: Path) -> Iterator[Path]:
    with own_key_store(tmp_path / "keys") as folder:
        yield folder
