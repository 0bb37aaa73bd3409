"""Staff passwords: Argon2id hashes, generated passwords, and the minimum length.

argon2-cffi's defaults are RFC 9106's second recommended profile (64 MiB, 3 passes, 4 lanes).
Hashing costs a few hundred milliseconds of CPU on purpose, so callers do it before their
transaction opens when they can.
"""

from __future__ import annotations

import secrets
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 12
MAX_LENGTH = 1024
# 24 random bytes: 192 bits, 32 URL-safe characters, easy to paste.
GENERATED_BYTES = 24

_hasher = PasswordHasher()


def generate() -> str:
    return secrets.token_urlsafe(GENERATED_BYTES)


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify(password_hash: str, password: str) -> bool:
    """Whether ``password`` matches; False for a wrong password or a malformed hash."""
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    """Whether the hash was made with other parameters than the current ones."""
    return _hasher.check_needs_rehash(password_hash)


def verify_nothing(password: str) -> None:
    """Spend what a real check spends, for an email that names nobody, so the answer's timing
    does not tell which emails have accounts."""
    verify(_dummy_hash(), password)


@cache
def _dummy_hash() -> str:
    return _hasher.hash(secrets.token_urlsafe(GENERATED_BYTES))
