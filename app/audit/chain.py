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


def hashed_fields(event: AuditEvent) -> dict[str, Any]:
    return {
        "tenant_id": str(event.tenant_id),
        "seq": event.seq,
        "actor": event.actor,
        "action": event.action,
        "target_kind": event.target_kind,
        "target_id": event.target_id,
        "from_state": event.from_state,
        "to_state": event.to_state,
        "reason": event.reason,
        "details": event.details,
        "created_at": timestamp(event.created_at),
        "prev_hash": event.prev_hash,
    }


def digest(event: AuditEvent) -> str:
    """The hash ``event`` must carry, given its fields and `prev_hash`."""
    return hashlib.sha256(canonical(hashed_fields(event))).hexdigest()
