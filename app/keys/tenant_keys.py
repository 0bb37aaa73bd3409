"""A tenant's own key in the key store: the key of its keyed digests (subjects and sources
an erasure leaves behind, data key IDs). Never destroyed while the tenant exists, so each
process reads it once."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import uuid

from app.keys.configured import key_store
from app.keys.store import TENANT_ENTRY

KEY_BYTES = 32

_lock = threading.Lock()
_keys: dict[tuple[int, uuid.UUID], bytes] = {}


def tenant_key(tenant_id: uuid.UUID, *, create: bool = True) -> bytes:
    """The tenant's key; created when absent and ``create``, else `LookupError`."""
    store = key_store()
    known = _keys.get((id(store), tenant_id))
    if known is not None:
        return known
    key = store.load(tenant_id, TENANT_ENTRY)
    if key is None:
        if not create:
            raise LookupError("the tenant has no key in the key store")
        key = store.create(tenant_id, TENANT_ENTRY, secrets.token_bytes(KEY_BYTES))
    with _lock:
        _keys[(id(store), tenant_id)] = key
    return key


def derived(tenant_id: uuid.UUID, purpose: bytes) -> bytes:
    """A subkey of the tenant's key for one purpose, so no two uses share a key."""
    return hmac.new(tenant_key(tenant_id), b"lethe/" + purpose, hashlib.sha256).digest()


def forget_cached() -> None:
    with _lock:
        _keys.clear()
