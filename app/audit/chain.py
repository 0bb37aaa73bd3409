"""The hash chain: how one audit event's hash is computed from its fields.

hash = sha256 over the canonical JSON of the event's fields and its predecessor's hash:
keys sorted, separators "," and ":", non-ASCII escaped, UTF-8 (so ASCII) bytes; `tenant_id`
as its UUID string, `created_at` in UTC as ISO 8601 with microseconds (`…T12:00:00.000000+00:00`),
absent optional fields as null. The first event of a tenant links to 64 zeros. Anyone holding
the rows (e.g. from `GET /v1/audit`) and the tenant ID can recompute the chain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from app.audit.models import AuditEvent

GENESIS = "0" * 64


def timestamp(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError("audit timestamps must be timezone-aware")
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def canonical(fields: dict[str, Any]) -> bytes:
    return json.dumps(
        fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


FIELDS = ("tenant_id", "seq", "actor", "action", "target_kind", "target_id", "from_state",
          "to_state", "reason", "details", "created_at", "prev_hash")


def hashed_fields(event: AuditEvent) -> dict[str, Any]:
    return _hashed({name: getattr(event, name) for name in FIELDS})


def _hashed(values: Mapping[str, Any]) -> dict[str, Any]:
    return {**{name: values[name] for name in FIELDS}, "tenant_id": str(values["tenant_id"]),
            "created_at": timestamp(values["created_at"])}


def digest(event: AuditEvent) -> str:
    """The hash ``event`` must carry, given its fields and `prev_hash`."""
    return hashlib.sha256(canonical(hashed_fields(event))).hexdigest()


def digest_of(row: Mapping[str, Any]) -> str:
    """`digest` of an event given as its column values (`audit.record_many`)."""
    return hashlib.sha256(canonical(_hashed(row))).hexdigest()
