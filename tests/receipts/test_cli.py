"""`lethe receipts verify FILE [--key JWK]`, run as a separate process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.core.config import Settings
from app.receipts import keys, signing
from tests.receipts.helpers import sample_receipt

ROOT = Path(__file__).resolve().parents[2]


def _lethe(*args: str, data_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    env.pop(keys.ENVIRONMENT_VARIABLE, None)
    if data_dir is not None:
        env["LETHE_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "app.cli", "receipts", "verify", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_valid_receipt_verifies_and_a_tampered_one_fails(tmp_path: Path) -> None:
    key = keys.SigningKey(Ed25519PrivateKey.generate())
    receipt = signing.sign(sample_receipt(), key=key)
    good = tmp_path / "receipt.json"
    good.write_text(json.dumps(receipt, indent=2))
    jwk_file = tmp_path / "key.json"
    jwk_file.write_text(json.dumps(key.public_jwk))

    passed = _lethe(str(good), "--key", str(jwk_file))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.startswith("OK")

    inline = _lethe(str(good), "--key", json.dumps(key.public_jwk))
    assert inline.returncode == 0 and inline.stdout.startswith("OK")

    # One byte changed: a count 12 becomes 13.
    raw = good.read_bytes()
    at = raw.index(b'"memories": 12') + len(b'"memories": 1')
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(raw[:at] + b"3" + raw[at + 1:])
    failed = _lethe(str(tampered), "--key", str(jwk_file))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert failed.stdout.startswith("FAILED") and "does not match" in failed.stdout


def test_without_key_it_uses_the_data_folders_key(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    key = keys.signing_key(Settings(data_dir=folder))
    receipt = tmp_path / "receipt.json"
    # An erasure request as `GET /v1/erasure-requests/{id}` answers it, receipt inside.
    receipt.write_text(json.dumps({"id": "r", "status": "completed",
                                   "receipt": signing.sign(sample_receipt(), key=key)}))
    passed = _lethe(str(receipt), data_dir=folder)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert key.kid in passed.stdout

    elsewhere = _lethe(str(receipt), data_dir=tmp_path / "empty")
    assert elsewhere.returncode == 1
    assert "no receipt key" in elsewhere.stdout
    assert not (tmp_path / "empty").exists(), "verifying never generates a key"


def test_unreadable_inputs_fail_with_a_reason(tmp_path: Path) -> None:
    key = keys.SigningKey(Ed25519PrivateKey.generate())
    missing = _lethe(str(tmp_path / "nope.json"), "--key", json.dumps(key.public_jwk))
    assert missing.returncode == 1 and "cannot read" in missing.stdout
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    broken = _lethe(str(garbage), "--key", json.dumps(key.public_jwk))
    assert broken.returncode == 1 and "not JSON" in broken.stdout
    twice = tmp_path / "twice.json"
    signed = json.dumps(signing.sign(sample_receipt(), key=key))
    twice.write_text(signed[:-1] + ', "status": "failed"}')
    duplicated = _lethe(str(twice), "--key", json.dumps(key.public_jwk))
    assert duplicated.returncode == 1 and "twice" in duplicated.stdout
