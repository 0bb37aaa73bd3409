"""Key material: generation, hashing and constant-time comparison."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid

KEY_PREFIX = "lethe_"


def key_prefix(key_id: uuid.UUID) -> str:
    """The start of a key that listings show: part of the key's own ID, so two keys of one
    role are told apart when rotating (docs/decisions.md, "An API key's prefix")."""
    return f"{KEY_PREFIX}{key_id.hex[:8]}"


def generate_api_key(role: str, key_id: uuid.UUID) -> str:
    # 256 bits of randomness; the role is visible in the key so people notice pasting the
    # compliance key into a product backend. Only the key's hash authenticates: keys made
    # before the prefix held the ID (`lethe_<role>_…`) keep working.
    return f"{key_prefix(key_id)}_{role}_{secrets.token_urlsafe(32)}"


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def same_secret(presented: str, expected: str) -> bool:
    return hmac.compare_digest(presented.encode("utf-8"), expected.encode("utf-8"))


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
