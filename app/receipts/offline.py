"""Verifying a receipt file with no server: what `lethe receipts verify` runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.receipts import keys, signing
from app.receipts.signing import Verdict


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A JSON object with a name twice reads as either value depending on the reader; refusing
    # it keeps the verifier and a human reading the file from seeing different receipts.
    names = [name for name, _ in pairs]
    if len(names) != len(set(names)):
        raise _Duplicate("the file names a field twice")
    return dict(pairs)


def read_json(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_duplicates)


def load_key(argument: str | None) -> dict[str, Any]:
    """The JWK named by ``argument`` (a file, or the JSON itself), or the public key of the
    local data folder's receipt key when None; ValueError if there is none."""
    if argument is None:
        local = keys.local_key()
        if local is None:
            raise ValueError("no receipt key in this installation's data folder; pass --key "
                             "with the JWK from GET /v1/receipts/public-key")
        return dict(local.public_jwk)
    text = argument if argument.lstrip().startswith("{") else _read(Path(argument), "key")
    try:
        found = read_json(text)
    except ValueError as exc:
        raise ValueError(f"the key is not JSON ({exc})") from None
    if not isinstance(found, dict):
        raise ValueError("the key is not a JSON object")
    return found


def verify_file(path: Path, key: str | None = None) -> Verdict:
    """Whether the receipt in ``path`` verifies with ``key`` (see `load_key`).

    The file holds a receipt, or an erasure request whose `receipt` field is one.
    """
    try:
        jwk = load_key(key)
        text = _read(path, "receipt")
    except ValueError as exc:
        return Verdict(False, str(exc))
    return verify_text(text, jwk)


def verify_text(text: str, jwk: dict[str, Any]) -> Verdict:
    """Whether the receipt written in ``text`` verifies with ``jwk``."""
    try:
        document = read_json(text)
    except ValueError as exc:
        return Verdict(False, f"the receipt is not JSON ({exc})")
    if (isinstance(document, dict) and signing.SIGNATURE not in document
            and isinstance(document.get("receipt"), dict)):
        document = document["receipt"]
    return signing.check(document, jwk)


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the {what} file {path} ({type(exc).__name__})") from None
