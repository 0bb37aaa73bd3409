"""Request bodies as typed dictionaries: the keys a body may hold, checked by type checkers.

The server validates values (lengths, ranges) and answers 422 with the field: validating
them here too would be a second copy of each rule to keep in step.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, NotRequired, Required, TypedDict

Volatility = Literal["structural", "preferential", "procedural", "situational"]


class MemoryFields(TypedDict, total=False):
    """`POST /v1/memories` besides subject and text (also each memory of an ingestion)."""

    volatility: Volatility
    key: str | None
    supersedes: list[str]
    source: str | None
    derived_from: list[str]
    observed_at: datetime | str | None
    depends_on: dict[str, str]
    metadata: dict[str, Any]
    expected_revision: int | None
    expires_at: datetime | str | None


class IngestMemory(MemoryFields, total=False):
    text: Required[str]


class IngestMessage(TypedDict):
    role: Literal["user", "assistant", "system", "tool"]
    content: str


class MemoryPatch(TypedDict, total=False):
    """`PATCH /v1/memories/{id}`: what a correction may change."""

    text: str
    volatility: Volatility
    depends_on: dict[str, str]
    metadata: dict[str, Any]
    expires_at: datetime | str | None  # None clears it


class SettingsPatch(TypedDict, total=False):
    """`PATCH /v1/settings`: each group merges into the current one."""

    half_lives: dict[str, float]
    retention: dict[str, float]
    detect_forget_requests: bool
    supersession: dict[str, float]
    erasure: dict[str, Any]
    forget: dict[str, Any]
    retractions: dict[str, Any]
    limits: dict[str, Any]
    console: dict[str, Any]


class HoldScope(TypedDict, total=False):
    """What a legal hold covers: exactly one of the three."""

    subject: str
    memory_ids: list[str]
    source: str


class LegalHoldCreate(HoldScope, total=False):
    reason: Required[str]
    case_ref: NotRequired[str | None]
