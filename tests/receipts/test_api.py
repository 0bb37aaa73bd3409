"""`GET /v1/receipts/public-key`: no authentication, and its JWK verifies receipts."""

from __future__ import annotations

from typing import Any

from app.receipts import jwk as jwks
from app.receipts import keys, signing
from tests.receipts.helpers import sample_receipt


def test_the_public_key_is_served_without_a_key_and_verifies_a_receipt(client: Any) -> None:
    response = client.get("/v1/receipts/public-key")
    assert response.status_code == 200, response.text
    jwk = response.json()
    assert set(jwk) == {"kty", "crv", "x", "kid", "alg", "use"}
    assert (jwk["kty"], jwk["crv"], jwk["alg"], jwk["use"]) == ("OKP", "Ed25519", "EdDSA", "sig")
    assert jwk["kid"] == jwks.thumbprint(jwk["x"])
    assert '"d"' not in response.text
    receipt = signing.sign(sample_receipt())  # this installation's key
    assert receipt["key_id"] == jwk["kid"]
    assert signing.verify(receipt, jwk)
    assert not signing.verify({**receipt, "status": "failed"}, jwk)
    # Stable: every call, and every process of the installation, serves the same key.
    assert client.get("/v1/receipts/public-key").json() == jwk
    local = keys.local_key()
    assert local is not None and local.public_jwk == jwk


def test_the_public_key_ignores_credentials(client: Any, tenant: dict[str, Any]) -> None:
    anonymous = client.get("/v1/receipts/public-key").json()
    assert client.get("/v1/receipts/public-key", headers=tenant["app"]).json() == anonymous
    bogus = {"Authorization": "Bearer nonsense"}
    assert client.get("/v1/receipts/public-key", headers=bogus).json() == anonymous
