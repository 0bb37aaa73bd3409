"""Keyed digests: how Lethe names a subject or a source it must no longer name.

An erasure keeps the subject only as HMAC-SHA256 under the tenant's own key, and excludes
the subject's sources by that digest too. Keyed, so a dump of the database cannot be checked
against a list of guessed e-mail addresses or user IDs without the key; per tenant, so two
tenants' digests of the same subject differ. The key lives in the key store (`app/keys/`),
never in the database, so no dump or backup carries it. Lookups by plain string (a source
being written, `?subject=` on erasure requests) compute the digest and compare.
"""

from __future__ import annotations

import uuid

from sqlmodel import Session

from app.keys import digests, tenant_keys

# What replaces an erased subject or source in rows that must keep a value: `erased:<hex>`.
MARKER = "erased:"


def key_of(session: Session, tenant_id: uuid.UUID) -> bytes:
    """The tenant's key (cached in the process by `tenant_keys`). ``session`` is unused since
    the key left the database; callers keep passing the one they hold."""
    return tenant_keys.tenant_key(tenant_id)


def digest(session: Session, *, tenant_id: uuid.UUID, value: str) -> str:
    """The tenant's keyed digest of ``value`` (64 hex characters)."""
    return digest_with(key_of(session, tenant_id), value)


def digest_with(key: bytes, value: str) -> str:
    return digests.source_digest_with(key, value)


def marker(hex_digest: str) -> str:
    """The stand-in written where a column must keep a value (`erased:<digest>`)."""
    return MARKER + hex_digest
