"""Signed receipts: Ed25519 signatures over RFC 8785 canonical JSON, verifiable offline with
nothing but the public key (served as a JWK at `GET /v1/receipts/public-key`)."""
