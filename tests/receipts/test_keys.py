"""The receipt key: given by the environment, or generated once into the data folder."""

from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from app.core.config import Settings
from app.receipts import keys, signing
from tests.receipts.helpers import sample_receipt


def _settings(data_dir: Path, **extra: Any) -> Settings:
    return Settings(data_dir=data_dir, **extra)


def test_a_generated_key_is_kept_in_the_data_folder_with_mode_0600(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    assert keys.local_key(_settings(folder)) is None
    key = keys.signing_key(_settings(folder))
    path = folder / keys.KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in folder.iterdir()] == [keys.KEY_FILE], "no temporary file left"
    # Another process of the installation reads the same key.
    again = keys.local_key(_settings(folder))
    assert again is not None and again.kid == key.kid
    assert keys._load_or_create(path).public_key().public_bytes_raw() == (
        key.private.public_key().public_bytes_raw())


def test_a_given_key_is_used_as_pem_or_base64url(tmp_path: Path) -> None:
    private = Ed25519PrivateKey.generate()
    expected = keys.SigningKey(private).kid
    raw = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    given = {
        "pem": keys.pem(private).decode(),
        "base64url": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "padded": base64.urlsafe_b64encode(raw).decode(),
    }
    for form, value in given.items():
        key = keys.signing_key(_settings(tmp_path / form, receipt_signing_key=value))
        assert key.kid == expected, form
        assert not (tmp_path / form).exists(), "a given key generates nothing"
        assert signing.verify(signing.sign(sample_receipt(), key=key), key.public_jwk)


def test_a_malformed_key_is_refused_without_quoting_it(tmp_path: Path) -> None:
    for value in ("not a key at all", "AAAA", "-----BEGIN PRIVATE KEY-----\nxx\n-----END "
                  "PRIVATE KEY-----"):
        with pytest.raises(ValueError) as refused:
            keys.signing_key(_settings(tmp_path, receipt_signing_key=value))
        assert value not in str(refused.value)
        assert keys.ENVIRONMENT_VARIABLE in str(refused.value)


def test_production_generates_no_key(tmp_path: Path) -> None:
    production = _settings(tmp_path / "data", environment="production",
                           admin_token="a" * 32, secret_key="s" * 32)
    with pytest.raises(keys.ReceiptKeyMissing, match=keys.ENVIRONMENT_VARIABLE):
        keys.signing_key(production)
    assert not (tmp_path / "data" / keys.KEY_FILE).exists()
    given = keys.pem(Ed25519PrivateKey.generate()).decode()
    configured = production.model_copy(update={"receipt_signing_key": given})
    assert keys.signing_key(configured).kid
