"""How the database names a subject or a source: by keyed digest, never by the string.

A subject is stored as `subject_digest` (HMAC-SHA256 under the tenant key's `key-id` subkey,
32 hex characters), which is also the ID of the subject's first data key (`subjects.py`), so a
row's stored subject finds the key that opens the row. A source is stored as `source_digest`
(HMAC-SHA256 under the tenant's key, 64 hex characters: the digest source exclusions and
erasures always kept). Keyed and per tenant: a dump cannot be checked against guessed names
without the key store, and two tenants' digests of one subject differ. Equality lookups work
by digesting the value asked for; prefixes and patterns cannot (docs/decisions.md,
"Encryption at rest").

A value that is already an erasure's stand-in (`erased:<hex>`) is stored as it is: it names
no one, and a request cannot produce it (a digest is hex only).
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

from app.keys import tenant_keys

SUBJECT_HEX = 32
ERASED = "erased:"


def subject_digest(tenant_id: uuid.UUID, subject: str) -> str:
    """The subject as every table stores it."""
    if subject.startswith(ERASED):
        return subject
    return subject_digest_with(tenant_keys.derived(tenant_id, b"key-id"), subject)


def subject_digest_with(id_key: bytes, subject: str) -> str:
    return hmac.new(id_key, subject.encode("utf-8"), hashlib.sha256).hexdigest()[:SUBJECT_HEX]


def source_digest(tenant_id: uuid.UUID, source: str) -> str:
    """The source as every table stores it (and as exclusions and erasures name it)."""
    if source.startswith(ERASED):
        return source
    return source_digest_with(tenant_keys.tenant_key(tenant_id), source)


def source_digest_with(key: bytes, source: str) -> str:
    return hmac.new(key, source.encode("utf-8"), hashlib.sha256).hexdigest()


def optional_source(tenant_id: uuid.UUID, source: str | None) -> str | None:
    return None if source is None else source_digest(tenant_id, source)


def optional_subject(tenant_id: uuid.UUID, subject: str | None) -> str | None:
    return None if subject is None else subject_digest(tenant_id, subject)
