"""Memories as the API accepts and shows them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AllowInfNan,
    BaseModel,
    Field,
    GetJsonSchemaHandler,
    Strict,
    field_validator,
)
from typing_extensions import TypeAliasType

from app.audit.schemas import TrailEvent
from app.core.schemas import (
    INT32_MAX,
    INT64_MAX,
    INT64_MIN,
    BodyTime,
    BodyUUID,
    CleanStr,
    NonBlank,
    StrictModel,
)
from app.memories.models import MemoryState, Volatility

TEXT_MAX = 8000
# Bodies arrive as parsed JSON, where an enum member can only be its string value.
VolatilityIn = Annotated[Volatility, Strict(False)]
# Free-form JSON for `metadata`, minus the NUL that jsonb refuses.
class _ClosedKeys:
    """In the JSON schema, an object's keys must match its key pattern (no NUL), at any depth."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: Any, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        schema: dict[str, Any] = handler(core_schema)
        schema["additionalProperties"] = False
        return schema


MetadataInt = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]
# NaN and Infinity (1e400 parses as one) are not JSON, and jsonb refuses them. Said on the type,
# not only by a model's `allow_inf_nan`: pydantic loses a model's setting inside this alias
# when the model has an after-validator and FastAPI wraps it (mem0's bodies).
MetadataFloat = Annotated[float, AllowInfNan(False)]
JsonValue = TypeAliasType(
    "JsonValue",
    "CleanStr | MetadataInt | MetadataFloat | bool | list[JsonValue] "
    "| Annotated[dict[CleanStr, JsonValue], _ClosedKeys] | None",
)

# Keys are constrained by `patternProperties`; without this, a key outside it would look valid.
CLOSED: dict[str, Any] = {"additionalProperties": False}
# Free-form metadata whose schema closes the object itself, so it stays right inside the
# `anyOf` of an optional field.
ClosedMetadata = Annotated[dict[CleanStr, JsonValue], _ClosedKeys]


def _integral(value: Any) -> Any:
    # JSON does not tell 3 from 3.0 (JSON Schema calls both integers); "3" and true stay wrong.
    if type(value) is float and value.is_integer():
        return int(value)
    return value


class MemoryFields(StrictModel):
    """Everything a write says about one memory except whom it is about."""

    text: NonBlank = Field(min_length=1, max_length=TEXT_MAX, description="1 to 8000 chars.")
    volatility: VolatilityIn = Volatility.preferential
    key: NonBlank | None = Field(
        None, min_length=1, max_length=255,
        description="A slot: one live memory per (subject, key).",
    )
    supersedes: list[BodyUUID] = Field(default_factory=list, max_length=100)
    source: NonBlank | None = Field(None, min_length=1, max_length=255)
    derived_from: list[BodyUUID] = Field(default_factory=list, max_length=100)
    depends_on: dict[CleanStr, CleanStr] = Field(default_factory=dict, json_schema_extra=CLOSED)
    metadata: dict[CleanStr, JsonValue] = Field(default_factory=dict, json_schema_extra=CLOSED)
    expected_revision: int | None = Field(
        None, ge=1, le=INT32_MAX,
        description="With `key`: the slot memory's revision this write replaces.",
    )
    observed_at: BodyTime | None = Field(
        None, description="When it was said or observed (a conversation turn's time); "
        "default: the write time.",
    )
    session: NonBlank | None = Field(
        None, min_length=1, max_length=255,
        description="The agent run that wrote it; closing the run "
        "(`POST /v1/sessions/{session}/close`) evicts its `working` memories.",
    )
    expires_at: BodyTime | None = Field(
        None, description="When it stops being true: from that instant it is no longer "
        "recalled nor listed among live memories; a time in the past is refused (422).",
    )

    _whole = field_validator("expected_revision", mode="before")(_integral)


class MemoryCreate(MemoryFields):
    subject: NonBlank = Field(min_length=1, max_length=255, description="Whom it is about.")


class MemoryPatch(StrictModel):
    """Any of these; a new `text` appends a version. Sending none changes nothing."""

    text: NonBlank | None = Field(None, min_length=1, max_length=TEXT_MAX)
    volatility: VolatilityIn | None = None
    depends_on: dict[CleanStr, CleanStr] | None = Field(None, json_schema_extra=CLOSED)
    metadata: dict[CleanStr, JsonValue] | None = Field(None, json_schema_extra=CLOSED)
    expires_at: BodyTime | None = Field(
        None, description="Sets or moves the expiry; `null` clears it; a time in the past is "
        "refused (422).",
    )

    def changes_nothing(self) -> bool:
        return all(getattr(self, name) is None for name in type(self).model_fields
                   if name != "expires_at") and "expires_at" not in self.model_fields_set

    def changed(self) -> list[str]:
        """The fields this correction names (`expires_at` also when it clears it)."""
        return sorted(name for name in type(self).model_fields
                      if getattr(self, name) is not None
                      or (name == "expires_at" and name in self.model_fields_set))


class PromoteBody(StrictModel):
    volatility: Literal["structural", "preferential", "procedural", "situational"] = Field(
        description="The durable class the working memory takes.")


class RevertBody(StrictModel):
    seq: int = Field(ge=1, le=INT32_MAX, description="The version to point at again.")

    _whole = field_validator("seq", mode="before")(_integral)


class RedactedAnswer(BaseModel):
    """A replayed answer about a memory forgotten (or struck) since it was first given: stored
    answers never keep forgotten text, so the replay keeps only the ID and the state."""

    id: uuid.UUID
    state: str = Field(description="`forgotten`; after a strike that redacted, its state then.",
                       examples=["forgotten"])


class VersionRef(BaseModel):
    id: uuid.UUID
    seq: int


class MemoryPublic(BaseModel):
    id: uuid.UUID
    subject: str
    text: str
    revision: int
    version: VersionRef
    state: MemoryState
    volatility: Volatility
    key: str | None
    source: str | None
    depends_on: dict[str, Any]
    metadata: dict[str, Any]
    superseded_by: uuid.UUID | None
    flags: list[str]
    created_at: datetime
    updated_at: datetime
    last_validated_at: datetime
    observed_at: datetime = Field(description="When it was said or observed.")
    session: str | None = Field(None, description="The agent run that wrote it, if any.")
    expires_at: datetime | None = Field(
        None, description="When it stops being true; null: it does not expire.")


class Effects(BaseModel):
    superseded: list[uuid.UUID] = Field(default_factory=list)
    suspected: list[uuid.UUID] = Field(default_factory=list)
    retraction: dict[str, Any] | None = None


class MemoryWritten(MemoryPublic):
    effects: Effects


class ForgetRequestHandled(BaseModel):
    """The text was a request to forget: handled as POST /v1/forget, nothing stored."""

    id: None = None
    stored: bool = False
    effects: Effects


class MemoryPage(BaseModel):
    data: list[MemoryPublic]
    next_cursor: str | None


class VersionPublic(BaseModel):
    id: uuid.UUID
    seq: int
    text: str
    created_at: datetime
    current: bool


class VersionList(BaseModel):
    data: list[VersionPublic]


class EdgePublic(BaseModel):
    kind: str
    ref: str
    created_at: datetime


class Lineage(BaseModel):
    id: uuid.UUID
    state: MemoryState
    versions: list[VersionPublic]
    superseded_by: uuid.UUID | None
    supersedes: list[uuid.UUID]
    contradicted_by: uuid.UUID | None = Field(
        description="The memory whose write last flagged this one `contradicted`, if any."
    )
    parents: list[EdgePublic]
    children: list[EdgePublic]
    audit_events: list[TrailEvent] = Field(
        description="The audit events about this memory, oldest first (the last 200)."
    )


class Tombstone(BaseModel):
    """A forgotten memory as the console shows it: ID, when, why, who; no content."""

    id: uuid.UUID
    forgotten_at: datetime
    reason: str | None
    actor: str | None
    audit_events: list[TrailEvent]
