"""Key material: generation, hashing and constant-time comparison."""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_PREFIX = "lethe_"


def generate_api_key(role: str) -> str:
    # 256 bits of randomness; the role is visible in the key so people notice pasting the
    # compliance key into a product backend.
    return f"{KEY_PREFIX}{role}_{secrets.token_urlsafe(32)}"


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def display_prefix(raw: str) -> str:
    return raw[:16]


def same_secret(presented: str, expected: str) -> bool:
    return hmac.compare_digest(presented.encode("utf-8"), expected.encode("utf-8"))


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
