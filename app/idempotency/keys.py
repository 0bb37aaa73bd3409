"""What an Idempotency-Key names: the request it was first used with, and the IDs it derives."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import InvalidIdempotencyKey, InvalidRequest

# Stable namespace: IDs derived from (tenant, key) must never change across releases.
ID_NAMESPACE = uuid.UUID("6f1c1b1e-3d0a-4c59-9d5e-6c2f0e1a7b42")


@dataclass(frozen=True)
class Claim:
    """A key this request now holds; the record is written when the request succeeds."""

    tenant_id: uuid.UUID
    key: str
    digest: str
    method: str
    path: str
    kind: str
    # The request's body, read for whom its answer is about (never stored).
    body: bytes = field(default=b"", repr=False, compare=False)

    def derived_id(self, kind: str | None = None) -> uuid.UUID:
        return derive_id(self.tenant_id, self.key, kind or self.kind)


@dataclass(frozen=True)
class Replay:
    status: int
    body: Any
    headers: dict[str, str]


def validate_key(key: str) -> str:
    if not 1 <= len(key) <= 255 or not all(" " <= ch <= "~" for ch in key):
        raise InvalidIdempotencyKey("Idempotency-Key must be 1 to 255 printable ASCII characters.")
    return key


def derive_id(tenant_id: uuid.UUID, key: str, kind: str) -> uuid.UUID:
    """The ID a create with this key gets — the same however late a redelivery arrives."""
    return uuid.uuid5(ID_NAMESPACE, f"{tenant_id}:{kind}:{key}")


def request_digest(method: str, path: str, body: bytes) -> str:
    """What a second request with the key must match: method, path and the body as JSON
    (keys sorted, spacing dropped), or as bytes when it is no JSON."""
    try:
        canonical: bytes = json.dumps(
            json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8") if body.strip() else b""
    except (ValueError, UnicodeDecodeError):
        canonical = body
    except RecursionError:
        # Python's parser recurses once per level. A route that takes a body has refused
        # such a body already; one that takes none (confirm, a DELETE …) gets here with it.
        raise InvalidRequest("The request body is nested too deeply.") from None
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), canonical):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
