"""Audit events and chain verification as the API shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from app.core.schemas import PublicModel


class AuditEventPublic(PublicModel):
    seq: int = Field(description="Position in this tenant's chain: 1, 2, 3 … without gaps.")
    actor: str = Field(description='"key:<api key id>", "staff:<staff member id>", '
                                   '"system:<job>" or "admin".')
    action: str = Field(description='What happened, e.g. "memory.transition" or '
                                    '"memory.corrected".')
    target_kind: str
    target_id: str | None
    from_state: str | None
    to_state: str | None
    reason: str | None
    details: dict[str, Any] = Field(description="Content-free facts: counts, flags, IDs.")
    created_at: datetime
    prev_hash: str = Field(description="The previous event's hash (64 zeros for seq 1).")
    hash: str = Field(description="SHA-256 over this event's canonical JSON and prev_hash.")


class TrailEvent(PublicModel):
    """One audit event about a target, as a memory's lineage lists it: who moved it where and
    why, without the chain's hashes (`GET /v1/audit?target_id=` has the full event)."""

    seq: int = Field(description="Its position in the tenant's audit chain.")
    actor: str = Field(description='"key:<api key id>", "staff:<staff member id>", '
                                   '"system:<job>" or "admin".')
    action: str = Field(description='What happened, e.g. "memory.transition" or '
                                    '"memory.corrected".')
    from_state: str | None
    to_state: str | None
    reason: str | None
    details: dict[str, Any] = Field(description="Content-free facts: counts, flags, IDs.")
    created_at: datetime


class AuditPage(PublicModel):
    data: list[AuditEventPublic]
    next_cursor: str | None


class VerifyResult(PublicModel):
    ok: bool = Field(description="Every hash recomputes, every link holds, no seq is missing.")
    events: int = Field(description="How many events the chain holds.")
    head: str | None = Field(
        description="The last event's hash; keep it elsewhere to detect a cut-off tail."
    )
    first_bad_seq: int | None = Field(
        default=None, description="The first seq whose row is altered, missing or misplaced."
    )
