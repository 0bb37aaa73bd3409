"""The key store this installation uses: `LETHE_KEY_STORE`, else `keys` in the data folder."""

from __future__ import annotations

import threading
from pathlib import Path

from app.core.config import get_settings
from app.keys.files import FileKeyStore
from app.keys.store import KeyStore

_lock = threading.Lock()
_stores: dict[tuple[Path | None, Path], KeyStore] = {}


def store_path() -> Path:
    settings = get_settings()
    return (settings.key_store or settings.data_dir / "keys").resolve()


def key_store() -> KeyStore:
    """This installation's key store, one object per folder and process."""
    settings = get_settings()
    # Found by the settings as given: resolving the path is a walk of the file system, and
    # this runs on every use of a cached key.
    found = _stores.get((settings.key_store, settings.data_dir))
    if found is not None:
        return found
    with _lock:
        store = _stores.setdefault((settings.key_store, settings.data_dir),
                                   _shared(store_path()))
    return store


def _shared(path: Path) -> KeyStore:
    for store in _stores.values():
        if isinstance(store, FileKeyStore) and store.root == path:
            return store
    return FileKeyStore(path)
