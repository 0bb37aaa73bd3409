"""Signing and verifying receipts.

A receipt's `signature` is the base64url (unpadded) Ed25519 signature over the RFC 8785 (JCS)
canonical JSON of the receipt without its `signature` field; `key_id`, the RFC 7638
thumbprint of the signing key, is part of what is signed. Canonical JSON makes the signature
independent of key order and whitespace, so a receipt verifies however it was stored or
pretty-printed on its way to an auditor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature

from app.receipts import jwk as jwks
from app.receipts.keys import SigningKey, signing_key

SIGNATURE = "signature"
KEY_ID = "key_id"
SIGNATURE_BYTES = 64


def canonical(value: Any) -> bytes:
    """The RFC 8785 canonical form of a JSON value (UTF-8)."""
    return rfc8785.dumps(value)


def signed_part(receipt: Mapping[str, Any]) -> bytes:
    """What a receipt's signature covers: the canonical receipt without `signature`."""
    return canonical({name: value for name, value in receipt.items() if name != SIGNATURE})


def sign(receipt: Mapping[str, Any], *, key: SigningKey | None = None) -> dict[str, Any]:
    """``receipt`` with `key_id` and `signature` (any old ones replaced), signed by ``key``
    (by default this installation's receipt key)."""
    key = key or signing_key()
    body = {name: value for name, value in receipt.items() if name != SIGNATURE}
    body[KEY_ID] = key.kid
    return {**body, SIGNATURE: jwks.b64url(key.private.sign(canonical(body)))}


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str


def check(receipt: Any, jwk: Mapping[str, Any]) -> Verdict:
    """Whether ``receipt`` was signed by the key ``jwk`` describes and is unchanged since,
    with the reason when it is not. Needs nothing but the public key."""
    try:
        public, kid = jwks.public_key(jwk)
    except ValueError as exc:
        return Verdict(False, str(exc))
    if not isinstance(receipt, Mapping):
        return Verdict(False, "the receipt is not a JSON object")
    signature = receipt.get(SIGNATURE)
    if not isinstance(signature, str):
        return Verdict(False, "the receipt has no signature")
    if receipt.get(KEY_ID) != kid:
        return Verdict(False, f"the receipt names key {receipt.get(KEY_ID)!r}, not this key "
                              f"({kid})")
    try:
        raw = jwks.from_b64url(signature)
    except ValueError:
        return Verdict(False, "the signature is not unpadded base64url")
    if len(raw) != SIGNATURE_BYTES:
        return Verdict(False, f"the signature is {len(raw)} bytes, not {SIGNATURE_BYTES}")
    try:
        signed = signed_part(receipt)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        return Verdict(False, f"the receipt has no canonical JSON form ({type(exc).__name__})")
    try:
        public.verify(raw, signed)
    except InvalidSignature:
        return Verdict(False, "the signature does not match the receipt: it was changed "
                              "after signing, or signed by another key")
    return Verdict(True, f"signed by key {kid}")


def verify(receipt: Mapping[str, Any], jwk: Mapping[str, Any]) -> bool:
    """True when ``receipt`` carries a valid signature of the key ``jwk``."""
    return check(receipt, jwk).ok
