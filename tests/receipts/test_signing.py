"""Receipts verify with the public JWK alone, and fail after any change."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app.receipts import offline, signing
from app.receipts.keys import SigningKey
from tests.receipts.helpers import sample_receipt


@pytest.fixture
def key() -> SigningKey:
    return SigningKey(Ed25519PrivateKey.generate())


def _public_only(key: SigningKey) -> dict[str, Any]:
    """The JWK as an auditor receives it: JSON text, nothing private."""
    jwk: dict[str, Any] = json.loads(json.dumps(key.public_jwk))
    assert set(jwk) == {"kty", "crv", "x", "kid", "alg", "use"}
    return jwk


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_a_signed_receipt_verifies_with_a_verifier_built_from_the_jwk_alone(
    key: SigningKey,
) -> None:
    receipt = signing.sign(sample_receipt(), key=key)
    assert list(receipt)[-2:] == ["key_id", "signature"]
    assert "=" not in receipt["signature"] and len(_unb64(receipt["signature"])) == 64
    jwk = _public_only(key)
    assert receipt["key_id"] == jwk["kid"]
    assert signing.verify(receipt, jwk)
    # An independent verifier: the RFC 8785 form without `signature`, checked with a public
    # key made from the JWK's `x` and nothing else of Lethe's.
    public = Ed25519PublicKey.from_public_bytes(_unb64(jwk["x"]))
    unsigned = {name: value for name, value in receipt.items() if name != "signature"}
    public.verify(_unb64(receipt["signature"]), rfc8785.dumps(unsigned))


def test_the_kid_is_the_rfc7638_thumbprint(key: SigningKey) -> None:
    jwk = _public_only(key)
    members = '{"crv":"Ed25519","kty":"OKP","x":"' + jwk["x"] + '"}'
    digest = hashlib.sha256(members.encode()).digest()
    assert jwk["kid"] == base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _leaves(item, (*path, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if value is None:
        return ""
    text = str(value)
    return text[:-1] + ("0" if text[-1] != "0" else "1")


def test_changing_any_field_value_fails_verification(key: SigningKey) -> None:
    receipt = signing.sign(sample_receipt(), key=key)
    jwk = _public_only(key)
    paths = [path for path in _leaves(receipt) if path[0] not in ("signature", "key_id")]
    assert len(paths) > 20
    for path in paths:
        tampered = copy.deepcopy(receipt)
        holder = tampered
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = _changed(holder[path[-1]])
        assert not signing.verify(tampered, jwk), path


def test_adding_or_removing_a_field_fails_verification(key: SigningKey) -> None:
    receipt = signing.sign(sample_receipt(), key=key)
    jwk = _public_only(key)
    assert not signing.verify({**receipt, "note": "kept"}, jwk)
    for name in receipt:
        if name != "signature":
            assert not signing.verify({k: v for k, v in receipt.items() if k != name}, jwk)


def test_changing_any_character_of_the_signature_fails(key: SigningKey) -> None:
    receipt = signing.sign(sample_receipt(), key=key)
    jwk = _public_only(key)
    signature = receipt["signature"]
    for index, char in enumerate(signature):
        # The last character carries unused bits; a lenient decoder would ignore a change
        # there, so it is tried with every other character.
        others = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                  if index == len(signature) - 1 else ("A" if char != "A" else "B"))
        for other in others:
            if other == char:
                continue
            forged = {**receipt, "signature": signature[:index] + other + signature[index + 1:]}
            assert not signing.verify(forged, jwk), (index, other)


def test_changing_any_byte_of_the_receipt_file_fails(key: SigningKey) -> None:
    receipt = signing.sign(sample_receipt(), key=key)
    jwk = _public_only(key)
    original = json.dumps(receipt, indent=2).encode()
    assert offline.verify_text(original.decode(), jwk).ok
    changed = 0
    for index in range(len(original)):
        mutated = bytearray(original)
        mutated[index] ^= 0x01
        try:
            text = bytes(mutated).decode()
            if json.loads(text) == receipt:
                continue  # the same receipt written differently (not possible here, but fair)
        except ValueError:
            pass
        changed += 1
        assert not offline.verify_text(bytes(mutated).decode(errors="replace"), jwk).ok, index
    assert changed == len(original)


def test_canonical_form_ignores_key_order_and_whitespace(key: SigningKey) -> None:
    receipt = signing.sign(sample_receipt(), key=key)

    def reversed_keys(value: Any) -> Any:
        if isinstance(value, dict):
            return {name: reversed_keys(value[name]) for name in reversed(list(value))}
        if isinstance(value, list):
            return [reversed_keys(item) for item in value]
        return value

    reordered = reversed_keys(receipt)
    assert list(reordered) != list(receipt)
    assert signing.canonical(reordered) == signing.canonical(receipt)
    for text in (json.dumps(reordered, indent=4), json.dumps(reordered, separators=(",", ":")),
                 "\n\t " + json.dumps(reordered, indent="\t") + "\n"):
        assert offline.verify_text(text, _public_only(key)).ok


def test_canonical_form_matches_rfc8785_examples() -> None:
    # RFC 8785 §3.2.2 and §3.2.3: the sample input and its canonical output.
    sample = json.loads(
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}')
    expected = ('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,'
                '1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')
    assert signing.canonical(sample) == expected.encode()
    # §3.2.3: properties sorted by their UTF-16 code units, not by code points.
    sorting = {"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet "
               "With Dagesh", "1": "One", "\U0001f600": "Emoji: Grinning Face",
               "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}
    order = [name for name, _ in json.loads(signing.canonical(sorting)).items()]
    assert order == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_a_receipt_signed_by_another_key_fails(key: SigningKey) -> None:
    other = SigningKey(Ed25519PrivateKey.generate())
    receipt = signing.sign(sample_receipt(), key=other)
    verdict = signing.check(receipt, _public_only(key))
    assert not verdict.ok and "names key" in verdict.reason
    # Relabelled with this key's ID, the other key's signature still does not verify.
    relabelled = {**receipt, "key_id": key.kid}
    assert not signing.verify(relabelled, _public_only(key))
    with pytest.raises(InvalidSignature):
        Ed25519PublicKey.from_public_bytes(_unb64(key.public_jwk["x"])).verify(
            _unb64(receipt["signature"]), signing.signed_part(relabelled))


def test_bad_keys_and_receipts_are_refused_with_a_reason(key: SigningKey) -> None:
    receipt = signing.sign(sample_receipt(), key=key)
    jwk = _public_only(key)
    assert "Ed25519" in signing.check(receipt, {**jwk, "crv": "X25519"}).reason
    assert "private" in signing.check(receipt, {**jwk, "d": jwk["x"]}).reason
    assert "base64url" in signing.check(receipt, {**jwk, "x": jwk["x"] + "="}).reason
    assert "no signature" in signing.check({**receipt, "signature": None}, jwk).reason
    assert "not a JSON object" in signing.check([receipt], jwk).reason
    assert not signing.check({**receipt, "counts": {"memories": 2**60}}, jwk).ok


def test_signing_again_replaces_the_old_signature(key: SigningKey) -> None:
    first = signing.sign(sample_receipt(), key=key)
    again = signing.sign({**first, "status": "on_hold"}, key=key)
    assert again["status"] == "on_hold" and signing.verify(again, _public_only(key))
    assert not signing.verify({**again, "signature": first["signature"]}, _public_only(key))
