"""Data keys per (tenant, subject): what the rest of Lethe seals, opens and hashes with.

A data key is 32 random bytes, kept in the key store wrapped under its KEK, named by a
`key_id` that is a function of the subject's keyed digest (`digests.subject_digest`, what every
table stores in place of the subject): the first key's ID is the digest itself, a later one's
the digest's HMAC with its generation. So a row's stored subject finds the key that opens it,
and an ID reveals nothing of the subject and differs between tenants. Every function here
takes the subject's digest, never the subject. Keys are cached in the process; every use of a
cached key asks the store whether it still exists, so an erasure's destruction in another
process stops this one from opening or sealing at once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from app.keys import digests, tenant_keys
from app.keys.configured import key_store
from app.keys.errors import KeyDestroyed, KeyStoreUnavailable, Tampered
from app.keys.store import KeyStore

__all__ = [
    "KeyDestroyed", "KeyStoreUnavailable", "SubjectKey", "Tampered", "current_key_id",
    "destroy_subject_key", "generation_of", "key_by_id", "key_id_of", "open_text", "row_aad",
    "seal_text", "subject_key",
]

KEY_BYTES = 32
GENERATION_BYTES = 4
NONCE_BYTES = 12
TAG_BYTES = 16
TERM_HEX = 32
# Enough for the subjects a busy process touches between two of their writes; a miss costs
# one read of the store.
CACHE_SIZE = 20_000


@dataclass(frozen=True)
class SubjectKey:
    key_id: str
    _key: bytes = field(repr=False, compare=False)
    # Which of the subject's keys this is: 0 until an erasure destroys it; a subject written
    # again after its erasure gets the next (its earlier ones stay destroyed).
    generation: int = 0
    _aead: AESGCM = field(init=False, repr=False, compare=False)
    _term_key: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_aead", AESGCM(self._key))
        # Terms under a subkey: a term hash never equals anything computed with the data key.
        object.__setattr__(self, "_term_key",
                           hmac.new(self._key, b"lethe/terms", hashlib.sha256).digest())

    def seal(self, plaintext: bytes, *, aad: bytes) -> bytes:
        """AES-256-GCM under a fresh random nonce: generation || nonce || ciphertext || tag
        (the generation authenticated with ``aad``)."""
        head = self.generation.to_bytes(GENERATION_BYTES, "big")
        nonce = secrets.token_bytes(NONCE_BYTES)
        return head + nonce + self._aead.encrypt(nonce, plaintext, head + aad)

    def open(self, sealed: bytes, *, aad: bytes) -> bytes:
        """`KeyDestroyed` for a value sealed under one of the subject's earlier keys (an
        erasure destroyed it; a copy restored from before it shows such values), `Tampered`
        for one that does not authenticate."""
        if len(sealed) < GENERATION_BYTES + NONCE_BYTES + TAG_BYTES:
            raise Tampered("too short to be a sealed value")
        head, nonce = sealed[:GENERATION_BYTES], sealed[GENERATION_BYTES:][:NONCE_BYTES]
        generation = int.from_bytes(head, "big")
        if generation < self.generation:
            raise KeyDestroyed("sealed under a key an erasure destroyed")
        if generation > self.generation:
            raise Tampered("sealed under a later key than this one")
        try:
            return self._aead.decrypt(nonce, sealed[GENERATION_BYTES + NONCE_BYTES:],
                                      head + aad)
        except InvalidTag:
            raise Tampered("sealed value does not authenticate") from None

    def term(self, term: str) -> str:
        """The keyed hash of one search term (32 hex characters)."""
        digest = hmac.new(self._term_key, term.encode("utf-8"), hashlib.sha256).hexdigest()
        return digest[:TERM_HEX]


def generation_of(sealed: bytes) -> int:
    """The generation of the key a value was sealed under (its first bytes)."""
    return int.from_bytes(sealed[:GENERATION_BYTES], "big")


def seal_text(key: SubjectKey, text: str, *, aad: bytes) -> bytes:
    return key.seal(text.encode("utf-8"), aad=aad)


def open_text(key: SubjectKey, sealed: bytes, *, aad: bytes) -> str:
    return key.open(sealed, aad=aad).decode("utf-8")


def row_aad(table: str, row_id: uuid.UUID, column: str) -> bytes:
    """What binds a ciphertext to its row and column: moved anywhere else, it fails to open."""
    return b"\0".join((b"lethe/v1", table.encode(), str(row_id).encode(), column.encode()))


def key_id_of(tenant_id: uuid.UUID, digest: str, generation: int = 0) -> str:
    """The ID of the data key of ``generation`` of the subject whose digest is ``digest``:
    the digest itself for the first, its HMAC under the tenant's `key-id` subkey with the
    generation after (what migration 0030 re-named earlier later-generation keys to)."""
    if generation == 0:
        return digest
    return digests.subject_digest_with(tenant_keys.derived(tenant_id, b"key-id"),
                                       f"{digest}\0{generation}")


def current_key_id(tenant_id: uuid.UUID, digest: str) -> str:
    """The ID of the subject's live key, or of its last destroyed one when it has none live
    (what an erasure destroys, and what it names on its receipt)."""
    generation, _ = _live_generation(key_store(), tenant_id, digest)
    return key_id_of(tenant_id, digest, generation)


_lock = threading.Lock()
_cache: OrderedDict[tuple[int, uuid.UUID, str], SubjectKey] = OrderedDict()


def subject_key(tenant_id: uuid.UUID, digest: str, *, create: bool = True) -> SubjectKey:
    """The data key of the tenant's subject of ``digest``, created on first use when ``create``.

    `KeyDestroyed` after an erasure destroyed it, `LookupError` when absent and not
    ``create``, `KeyStoreUnavailable` when the store cannot be read.
    """
    store = key_store()
    slot = (id(store), tenant_id, digest)
    cached = _cache.get(slot)
    if cached is not None:
        if store.present(tenant_id, cached.key_id):
            with _lock:
                if slot in _cache:
                    _cache.move_to_end(slot)
            return cached
        _drop(slot)
    key = _load(store, tenant_id, digest, create=create)
    with _lock:
        _cache[slot] = key
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return key


def key_by_id(tenant_id: uuid.UUID, key_id: str, generation: int = 0, *,
              store: KeyStore | None = None) -> SubjectKey | None:
    """The data key ``key_id`` (of ``generation``) from the store, None when it has none;
    `KeyDestroyed` when an erasure destroyed it."""
    raw = (store or key_store()).load(tenant_id, key_id)
    return None if raw is None else SubjectKey(key_id, raw, generation)


def _load(store: KeyStore, tenant_id: uuid.UUID, digest: str, *, create: bool) -> SubjectKey:
    while True:
        generation, key = _live_generation(store, tenant_id, digest)
        if key is not None:
            return key
        if generation > 0 and not create:
            raise KeyDestroyed("the subject's key was destroyed by an erasure")
        if not create:
            raise LookupError("no data key for this subject")
        try:
            key_id = key_id_of(tenant_id, digest, generation)
            raw = store.create(tenant_id, key_id, secrets.token_bytes(KEY_BYTES))
            return SubjectKey(key_id, raw, generation)
        except KeyDestroyed:  # destroyed while this was creating it: the next generation
            continue


def _live_generation(store: KeyStore, tenant_id: uuid.UUID, digest: str
                     ) -> tuple[int, SubjectKey | None]:
    """The first generation not destroyed, and its key if it exists. A subject never erased
    costs one read of the store."""
    generation = 0
    while True:
        try:
            return generation, key_by_id(tenant_id, key_id_of(tenant_id, digest, generation),
                                         generation, store=store)
        except KeyDestroyed:
            generation += 1


def destroy_subject_key(tenant_id: uuid.UUID, digest: str) -> tuple[str, datetime]:
    """Destroy the subject's live data key: (key_id, destroyed_at). Idempotent: with none live
    (destroyed already, nothing written since), the last destruction's. Everything sealed
    under it is unreadable from then on, in every copy of the database; a later write about
    the subject makes the next generation's key."""
    store = key_store()
    generation, live = _live_generation(store, tenant_id, digest)
    if live is None and generation > 0:
        generation -= 1
    key_id = key_id_of(tenant_id, digest, generation)
    destroyed_at = store.destroy(tenant_id, key_id)
    _drop((id(store), tenant_id, digest))
    return key_id, destroyed_at


def _drop(slot: tuple[int, uuid.UUID, str]) -> None:
    with _lock:
        _cache.pop(slot, None)


def forget_cached() -> None:
    """Drop every cached key (tests that swap stores; rotation needs no such thing)."""
    with _lock:
        _cache.clear()
    tenant_keys.forget_cached()
