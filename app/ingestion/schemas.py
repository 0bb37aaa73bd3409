"""What `POST /v1/ingest` accepts and answers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.core.errors import Problem
from app.core.schemas import CleanStr, StrictModel
from app.memories.schemas import (
    TEXT_MAX,
    Effects,
    MemoryCreate,
    MemoryFields,
    MemoryPublic,
    NonBlank,
    RedactedAnswer,
)

MAX_MEMORIES = 100
MAX_MESSAGES = 200


class IngestMemory(MemoryFields):
    """A `POST /v1/memories` body without `subject` (the ingestion names it once)."""

    source: NonBlank | None = Field(
        None, min_length=1, max_length=255,
        description="Defaults to the ingestion's `source` when not given.",
    )


class IngestMessage(StrictModel):
    role: Literal["user", "assistant", "system", "tool"]
    content: CleanStr = Field(min_length=1, max_length=TEXT_MAX)


class IngestBody(StrictModel):
    # Said in the schema too, so clients and property tests know an empty ingestion is invalid.
    model_config = ConfigDict(
        extra="forbid", strict=True,
        json_schema_extra={"anyOf": [
            {"required": ["memories"], "properties": {"memories": {"minItems": 1}}},
            {"required": ["messages"], "properties": {"messages": {"minItems": 1}}},
        ]},
    )

    subject: NonBlank = Field(min_length=1, max_length=255, description="Whom it is about.")
    source: NonBlank | None = Field(
        None, min_length=1, max_length=255, description="Cited by every item that names none."
    )
    memories: list[IngestMemory] = Field(default_factory=list, max_length=MAX_MEMORIES)
    messages: list[IngestMessage] = Field(
        default_factory=list, max_length=MAX_MESSAGES,
        description="Scanned for forget requests (user messages) when the tenant enables it.",
    )

    @model_validator(mode="after")
    def _not_empty(self) -> IngestBody:
        if not self.memories and not self.messages:
            raise ValueError("Send at least one memory or message.")
        return self

    def payload(self) -> dict[str, Any]:
        """The body as stored until the task applies it; unset fields stay unset.

        A slot write keeps the fields an item did not name, so "not given" must survive.
        """
        return self.model_dump(mode="json", exclude_unset=True)

    def memory_create(self, index: int) -> MemoryCreate:
        """Item ``index`` as a `POST /v1/memories` body."""
        item = self.memories[index]
        data: dict[str, Any] = {"subject": self.subject,
                                **item.model_dump(mode="json", exclude_unset=True)}
        if "source" not in item.model_fields_set and self.source is not None:
            data["source"] = self.source
        return MemoryCreate.model_validate(data)


BATCH_MAX = 100


class BatchBody(StrictModel):
    memories: list[Any] = Field(
        min_length=1, max_length=BATCH_MAX,
        description="Up to 100 `POST /v1/memories` bodies. Each is validated on its own: an "
        "invalid one is answered 422 in its slot and the others are still written.",
        # Items are read one by one (app/ingestion/batch.py), so the schema names their shape.
        json_schema_extra={"items": {"$ref": "#/components/schemas/MemoryCreate"}},
    )


class BatchItemProblem(Problem):
    """Why an item was refused (what `POST /v1/memories` would have answered)."""

    model_config = ConfigDict(extra="allow")


class BatchItemResult(BaseModel):
    """An item's answer: what `POST /v1/memories` would have answered for it alone."""

    status: int = Field(description="201 created; 200 a slot's new version or a forget "
                        "request handled; 4xx refused (see `error`).")
    memory: MemoryPublic | RedactedAnswer | None = Field(
        None, description="Absent when refused or when the item was a forget request.")
    effects: Effects | None = None
    error: BatchItemProblem | None = None


class BatchResult(BaseModel):
    results: list[BatchItemResult] = Field(description="One per item, in request order.")
