"""The Ed25519 key that signs receipts: given by `LETHE_RECEIPT_SIGNING_KEY`, or generated
once into the data folder beside the other generated secrets.

Production generates nothing: a key that lived only in one container's folder would sign
receipts no other replica, and no later deployment, could vouch for. Elsewhere every process
of one installation reads the same file, and the first to need it creates it atomically, so
two processes starting together never end up with two keys.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)

from app.core.config import Settings, get_settings
from app.receipts import jwk as jwks

KEY_FILE = "receipt-signing-key.pem"
ENVIRONMENT_VARIABLE = "LETHE_RECEIPT_SIGNING_KEY"
PRIVATE_KEY_BYTES = 32


class ReceiptKeyMissing(RuntimeError):
    """No receipt key where one must be given (production)."""


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey
    public_jwk: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "public_jwk", jwks.public_jwk(self.private.public_key()))

    @property
    def kid(self) -> str:
        return self.public_jwk["kid"]


def parse_private_key(value: str) -> Ed25519PrivateKey:
    """A key given as PEM (PKCS#8) or as the base64url of its 32 raw bytes.

    The error never quotes the value: it is a secret.
    """
    text = value.strip()
    if text.startswith("-----BEGIN"):
        try:
            key = load_pem_private_key(text.encode(), password=None)
        except (ValueError, TypeError):
            raise ValueError(f"{ENVIRONMENT_VARIABLE} is not a readable PEM private key") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError(f"{ENVIRONMENT_VARIABLE} is a PEM key, but not an Ed25519 one")
        return key
    try:
        raw = jwks.from_b64url(text.rstrip("="))
    except ValueError:
        raise ValueError(f"{ENVIRONMENT_VARIABLE} is neither PEM nor base64url") from None
    if len(raw) != PRIVATE_KEY_BYTES:
        raise ValueError(f"{ENVIRONMENT_VARIABLE} decodes to {len(raw)} bytes, not "
                         f"{PRIVATE_KEY_BYTES}")
    return Ed25519PrivateKey.from_private_bytes(raw)


def pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


_cache: dict[tuple[str | None, str, str], SigningKey] = {}


def signing_key(settings: Settings | None = None) -> SigningKey:
    """This installation's receipt key: the configured one, else the data folder's (created
    on first use outside production)."""
    settings = settings or get_settings()
    cache_key = (settings.receipt_signing_key, str(settings.data_dir.resolve()),
                 settings.environment)
    if cache_key not in _cache:
        _cache[cache_key] = SigningKey(_private_key(settings))
    return _cache[cache_key]


def local_key(settings: Settings | None = None) -> SigningKey | None:
    """The configured key or the data folder's, without creating one (offline verification
    must not verify against a key it has just made up)."""
    settings = settings or get_settings()
    if settings.receipt_signing_key:
        return SigningKey(parse_private_key(settings.receipt_signing_key))
    path = settings.data_dir / KEY_FILE
    return SigningKey(_read(path)) if path.exists() else None


def _private_key(settings: Settings) -> Ed25519PrivateKey:
    if settings.receipt_signing_key:
        return parse_private_key(settings.receipt_signing_key)
    if settings.environment == "production":
        raise ReceiptKeyMissing(
            f"{ENVIRONMENT_VARIABLE} must be set in production: an Ed25519 private key, PEM "
            "(PKCS#8) or the base64url of its 32 raw bytes")
    return _load_or_create(settings.data_dir / KEY_FILE)


def _load_or_create(path: Path) -> Ed25519PrivateKey:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole under a temporary name, with 0600 from the first byte, then linked
        # into place: link refuses to overwrite, so a process that loses the race reads the
        # winner's key instead of replacing it.
        fd, temporary = tempfile.mkstemp(prefix=".receipt-key-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(pem(Ed25519PrivateKey.generate()))
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
        finally:
            os.unlink(temporary)
    return _read(path)


def _read(path: Path) -> Ed25519PrivateKey:
    key = load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path.name} holds no Ed25519 private key")
    return key
