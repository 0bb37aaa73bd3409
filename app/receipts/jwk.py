"""Ed25519 public keys as JSON Web Keys (RFC 8037) and their RFC 7638 thumbprints.

Pure functions: no settings, no files. An auditor's verifier is built from a JWK alone.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

KTY, CRV, ALG, USE = "OKP", "Ed25519", "EdDSA", "sig"
PUBLIC_KEY_BYTES = 32


def b64url(raw: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def from_b64url(text: str) -> bytes:
    """The bytes of unpadded base64url ``text``; ValueError unless it is their one encoding.

    Strict on purpose: a lenient decoder ignores the unused low bits of the last character,
    so a signature with that character changed would still decode to the same bytes.
    """
    if not isinstance(text, str) or "=" in text:
        raise ValueError("not unpadded base64url")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not unpadded base64url") from None
    if b64url(raw) != text:
        raise ValueError("not the canonical base64url of its bytes")
    return raw


def thumbprint(x: str) -> str:
    """The RFC 7638 thumbprint (SHA-256, base64url) of the Ed25519 key whose `x` is ``x``:
    the hash of its required members, canonical."""
    required = {"crv": CRV, "kty": KTY, "x": x}
    return b64url(hashlib.sha256(rfc8785.dumps(required)).digest())


def public_jwk(key: Ed25519PublicKey) -> dict[str, str]:
    """``key`` as a JWK with its thumbprint as `kid`."""
    x = b64url(key.public_bytes(Encoding.Raw, PublicFormat.Raw))
    return {"kty": KTY, "crv": CRV, "x": x, "kid": thumbprint(x), "alg": ALG, "use": USE}


def public_key(jwk: Mapping[str, Any]) -> tuple[Ed25519PublicKey, str]:
    """The key a JWK describes and its thumbprint; ValueError if it is no Ed25519 signing key."""
    if not isinstance(jwk, Mapping):
        raise ValueError("the key is not a JSON object")
    if jwk.get("kty") != KTY or jwk.get("crv") != CRV:
        raise ValueError('the key is not an Ed25519 JWK ("kty": "OKP", "crv": "Ed25519")')
    # "Ed25519" is the fully-specified name (RFC 9864) for the same algorithm.
    if jwk.get("alg", ALG) not in (ALG, CRV) or jwk.get("use", USE) != USE:
        raise ValueError('the key is not for EdDSA signatures ("alg": "EdDSA", "use": "sig")')
    if "d" in jwk:
        raise ValueError("the key holds a private part; pass the public key only")
    try:
        raw = from_b64url(jwk.get("x"))  # type: ignore[arg-type]
    except ValueError:
        raise ValueError('the key\'s "x" is not base64url') from None
    if len(raw) != PUBLIC_KEY_BYTES:
        raise ValueError(f'the key\'s "x" is {len(raw)} bytes, not {PUBLIC_KEY_BYTES}')
    return Ed25519PublicKey.from_public_bytes(raw), thumbprint(jwk["x"])
