"""A tenant's own key in the key store: the key of its keyed digests (subjects and sources
an erasure leaves behind, data key IDs). Created with the tenant (`create_tenant_key`), or
moved out of the database by migration 0026; never destroyed while the tenant exists, so
each process reads it once.

A tenant whose key is missing is a store that lost it (or the wrong store): that is
`KeyStoreUnavailable`, never a fresh key, which would open nothing already written and
digest every subject differently from the digests already kept.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import uuid

from app.keys.configured import key_store
from app.keys.errors import KeyStoreUnavailable
from app.keys.store import TENANT_ENTRY

log = logging.getLogger(__name__)

KEY_BYTES = 32

_lock = threading.Lock()
_keys: dict[tuple[int, uuid.UUID], bytes] = {}


def tenant_key(tenant_id: uuid.UUID) -> bytes:
    """The tenant's key; `KeyStoreUnavailable` when the store does not hold it."""
    store = key_store()
    known = _keys.get((id(store), tenant_id))
    if known is not None:
        return known
    key = store.load(tenant_id, TENANT_ENTRY)
    if key is None:
        log.error("the key store holds no key for a tenant: is LETHE_KEY_STORE right?")
        raise KeyStoreUnavailable()
    return _remember(store, tenant_id, key)


def create_tenant_key(tenant_id: uuid.UUID, key: bytes | None = None) -> bytes:
    """Store a key for a new tenant (``key``, or a random one): the key stored. When the
    tenant has one already, that one, unchanged."""
    store = key_store()
    stored = store.create(tenant_id, TENANT_ENTRY, key or secrets.token_bytes(KEY_BYTES))
    return _remember(store, tenant_id, stored)


def _remember(store: object, tenant_id: uuid.UUID, key: bytes) -> bytes:
    with _lock:
        _keys[(id(store), tenant_id)] = key
    return key


def derived(tenant_id: uuid.UUID, purpose: bytes) -> bytes:
    """A subkey of the tenant's key for one purpose, so no two uses share a key."""
    return hmac.new(tenant_key(tenant_id), b"lethe/" + purpose, hashlib.sha256).digest()


def forget_cached() -> None:
    with _lock:
        _keys.clear()
