"""A key store of a test's own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def own_key_store(folder: Path) -> Iterator[Path]:
    """`LETHE_KEY_STORE` at ``folder`` (not created) until the block ends; no key cached from
    another store survives into it or out of it."""
    from app.core.config import get_settings
    from app.keys import subjects

    previous = os.environ.get("LETHE_KEY_STORE")
    os.environ["LETHE_KEY_STORE"] = str(folder)
    get_settings.cache_clear()
    subjects.forget_cached()
    try:
        yield folder
    finally:
        if previous is None:
            os.environ.pop("LETHE_KEY_STORE", None)
        else:
            os.environ["LETHE_KEY_STORE"] = previous
        get_settings.cache_clear()
        subjects.forget_cached()
