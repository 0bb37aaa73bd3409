"""Erasure requests and receipts as the API accepts and answers them."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.core.schemas import NonBlank, StrictModel
from app.erasure.models import ErasureStatus


class ErasureRequestCreate(StrictModel):
    subject: NonBlank = Field(min_length=1, max_length=255,
                              description="The data subject whose memories are erased.")
    reason: NonBlank | None = Field(None, min_length=1, max_length=500,
                                    description="Why (audited; never the subject's data).")
    requested_by: NonBlank | None = Field(
        None, min_length=1, max_length=200,
        description="Who asked, in the product's terms (a ticket, `data subject`).")


class ErasureFiled(BaseModel):
    """The answer to filing: 202 for a new request, 200 for the open one it matched."""

    id: uuid.UUID
    subject: str | None = Field(description="Null once the request completed.")
    status: ErasureStatus
    due_at: datetime
    created_at: datetime


class Progress(BaseModel):
    done: int = Field(description="Memories the cascade has erased (or found held).")
    total: int = Field(description="Memories the cascade has planned so far.")


class Counts(BaseModel):
    memories: int = 0
    versions: int = 0
    derived_memories: int = 0
    retractions: int = 0
    operations: int = 0
    idempotency_records: int = 0
    artifacts: int = 0
    source_exclusions: int = 0
    access_exports: int = 0


# A receipt's times are strings as signed: a datetime re-serialized on the way out could be
# written another way (`Z` for `+00:00`) and no longer match its signature.


class HeldItem(BaseModel):
    memory_id: str
    hold_id: str
    held_at: str
    released_at: str | None = Field(
        None, description="When the erasure found the hold released and went on.")


class ReceiptArtifact(BaseModel):
    id: str
    status: str
    acknowledged_at: str | None


class ReceiptDataKey(BaseModel):
    """The subject's data key: destroyed once the cascade completed, unless a hold kept a
    memory of the subject (then `key_destroyed_at` stays null)."""

    key_id: str | None = Field(description="The data key's ID in the key store (it reveals "
                                           "nothing of the subject); null before completion.")
    key_destroyed_at: str | None = Field(description="When the key store destroyed it.")


class Receipt(BaseModel):
    """What was erased, what a hold kept, which artifacts acknowledged, which data key was
    destroyed; signed (Ed25519 over the RFC 8785 canonical JSON without `signature`)."""

    request_id: str
    tenant_id: str
    subject_digest: str
    status: ErasureStatus
    requested_at: str
    completed_at: str | None
    vacuumed_at: str | None
    counts: Counts
    tombstoned: list[str]
    held: list[HeldItem]
    artifacts: list[ReceiptArtifact]
    data_key: ReceiptDataKey
    key_id: str
    signature: str


class ErasureRequestPublic(BaseModel):
    id: uuid.UUID
    subject: str | None = Field(description="The plain subject while the request is open; "
                                            "null once completed or cancelled.")
    subject_digest: str
    status: ErasureStatus
    reason: str | None
    requested_by: str | None
    due_at: datetime
    overdue: bool = Field(description="Still open past `due_at`.")
    created_at: datetime
    approved_at: datetime | None
    started_at: datetime | None
    completed_at: datetime | None
    cancelled_at: datetime | None
    vacuumed_at: datetime | None
    progress: Progress
    receipt: Receipt | None
    error: str | None


class ErasureRequestList(BaseModel):
    data: list[ErasureRequestPublic]
    next_cursor: str | None = None
