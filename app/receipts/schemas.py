"""What `GET /v1/receipts/public-key` answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class PublicKey(BaseModel):
    """The receipt key as an OKP JSON Web Key (RFC 8037)."""

    kty: Literal["OKP"] = "OKP"
    crv: Literal["Ed25519"] = "Ed25519"
    x: str = Field(description="The public key's 32 bytes, base64url without padding.")
    kid: str = Field(description="RFC 7638 thumbprint of the key; receipts name it as "
                                 "`key_id`.")
    alg: Literal["EdDSA"] = "EdDSA"
    use: Literal["sig"] = "sig"
