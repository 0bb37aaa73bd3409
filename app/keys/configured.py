"""The key store this installation uses: `LETHE_KEY_STORE`, else `keys` in the data folder."""

from __future__ import annotations

import threading
from pathlib import Path

from app.core.config import get_settings
from app.keys.files import FileKeyStore
from app.keys.store import KeyStore

_lock = threading.Lock()
_stores: dict[Path, KeyStore] = {}


def store_path() -> Path:
    settings = get_settings()
    return (settings.key_store or settings.data_dir / "keys").resolve()


def key_store() -> KeyStore:
    """This installation's key store, one object per folder and process."""
    path = store_path()
    with _lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = FileKeyStore(path)
    return store
