"""Keyed digests: how Lethe names a subject or a source it must no longer name.

An erasure keeps the subject only as HMAC-SHA256 under the tenant's own `digest_key`, and
excludes the subject's sources by that digest too. Keyed, so a dump of the database cannot
be checked against a list of guessed e-mail addresses or user IDs without the key; per
tenant, so two tenants' digests of the same subject differ. Lookups by plain string (a
source being written, `?subject=` on erasure requests) compute the digest and compare.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

from sqlmodel import Session

from app.tenants.models import Tenant

# What replaces an erased subject or source in rows that must keep a value: `erased:<hex>`.
MARKER = "erased:"


# A tenant's digest key never changes once the tenant exists, so each process reads it once:
# every write citing a source and every forget excluding one digests it.
_KEYS: dict[uuid.UUID, bytes] = {}


def key_of(session: Session, tenant_id: uuid.UUID) -> bytes:
    known = _KEYS.get(tenant_id)
    if known is not None:
        return known
    tenant = session.get(Tenant, tenant_id)
    if tenant is None:
        raise LookupError("no such tenant")
    key = _KEYS[tenant_id] = bytes(tenant.digest_key)
    return key


def digest(session: Session, *, tenant_id: uuid.UUID, value: str) -> str:
    """The tenant's keyed digest of ``value`` (64 hex characters)."""
    return digest_with(key_of(session, tenant_id), value)


def digest_with(key: bytes, value: str) -> str:
    return hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()


def marker(hex_digest: str) -> str:
    """The stand-in written where a column must keep a value (`erased:<digest>`)."""
    return MARKER + hex_digest
