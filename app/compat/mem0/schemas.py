"""mem0's request and response shapes, as its open-source REST server (`server/main.py`)
declares and answers them.

Requests ignore fields they do not know, as mem0's models do: a mem0 client sends options
(`infer`, `prompt`, `memory_type` …) that mean nothing here, and switching base URL must not
break it. Identifiers and texts are bounded like Lethe's own fields, so the write they turn
into cannot fail validation halfway through a request.
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from app.core.schemas import BodyTime, CleanStr, JsonInt, NonBlank
from app.erasure.schemas import ErasureFiled
from app.forgetting.schemas import SessionClosed
from app.memories.schemas import TEXT_MAX, ClosedMetadata

# A subject is at most 255 characters; an agent's subject carries a 6-character prefix.
Identifier = Annotated[NonBlank, Field(min_length=1, max_length=249)]
Metadata = ClosedMetadata


class Mem0Body(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class Mem0Message(Mem0Body):
    role: CleanStr = Field(max_length=50, description="`user`, `assistant` or `system`: "
                           "only `user` messages are stored.")
    content: CleanStr = Field(max_length=TEXT_MAX, description="The message text.")


IDENTIFIERS = ("user_id", "agent_id", "run_id")
# Said in the schema too: at least one of the two names whom the request is about.
ONE_IDENTIFIER: dict[str, Any] = {"anyOf": [
    {"required": ["user_id"], "properties": {"user_id": {"type": "string"}}},
    {"required": ["agent_id"], "properties": {"agent_id": {"type": "string"}}},
]}


class Mem0Scope(Mem0Body):
    """Whom a request is about: a user, or an agent's own memories."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False,
                              json_schema_extra=ONE_IDENTIFIER)

    user_id: Identifier | None = Field(None, description="The subject.")
    agent_id: Identifier | None = Field(
        None, description="Alone: the subject `agent:<agent_id>`; beside `user_id`: kept with "
        "each memory and used as a filter.")
    run_id: Identifier | None = Field(
        None, description="An agent run: the session of what is stored (as `working` "
        "memories), a filter on reads; with `user_id` or `agent_id`, never alone.")

    @model_validator(mode="after")
    def _named(self) -> Mem0Scope:
        if self.user_id is None and self.agent_id is None:
            # A run is not whom a memory is about: Lethe keeps memories by subject.
            raise ValueError("At least one identifier (user_id or agent_id) is required; "
                             "run_id narrows it to an agent run.")
        return self


def _expiration(value: Any) -> Any:
    # mem0 names a day ("2026-12-31"): the memory holds through it, so it expires when the
    # next day begins (UTC). A full time is taken as it is.
    if isinstance(value, str) and len(value) == 10:
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return value
        return datetime.combine(day + timedelta(days=1), time(), tzinfo=UTC)
    return value


class Mem0Add(Mem0Scope):
    messages: list[Mem0Message] = Field(max_length=100, description="The conversation turns.")
    metadata: Metadata | None = Field(None, description="Stored with each memory.")
    expiration_date: Annotated[BodyTime | None, BeforeValidator(_expiration)] = Field(
        None, description="When the memories stop being true: a day (`YYYY-MM-DD`, expiring "
        "as the next day begins, UTC) or a time; past → 422 (Lethe's `expires_at`).")


class Mem0Search(Mem0Scope):
    query: NonBlank = Field(min_length=1, max_length=2000, description="What to look for.")
    filters: Metadata | None = Field(
        None, description="`user_id`/`agent_id`/`run_id` here stand for the top-level fields "
        "(mem0's newer clients send them so); other keys must equal the memory's metadata.")
    limit: JsonInt = Field(20, ge=1, le=100, description="How many results at most.")

    @model_validator(mode="before")
    @classmethod
    def _identifiers_from_filters(cls, data: Any) -> Any:
        # mem0's newer clients name whom a search is about inside `filters`.
        if isinstance(data, dict) and isinstance(data.get("filters"), dict):
            named = {key: data["filters"][key] for key in IDENTIFIERS
                     if key in data["filters"] and data.get(key) is None}
            rest = {k: v for k, v in data["filters"].items() if k not in IDENTIFIERS}
            return {**data, **named, "filters": rest}
        return data


class Mem0Update(Mem0Body):
    text: NonBlank = Field(min_length=1, max_length=TEXT_MAX, description="The new text.")
    metadata: Metadata | None = Field(None, description="Replaces the memory's metadata.")


class Mem0Event(BaseModel):
    id: uuid.UUID
    memory: str | None = Field(description="The stored text; null for a memory a forget "
                               "request removed (forgotten text is never answered).")
    event: Literal["ADD", "UPDATE", "DELETE"]


class Mem0Added(BaseModel):
    results: list[Mem0Event]


class Mem0Memory(BaseModel):
    id: uuid.UUID
    memory: str
    hash: str = Field(description="MD5 of the text, as mem0 computes it.")
    metadata: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    user_id: str | None
    agent_id: str | None
    run_id: str | None


class Mem0Scored(Mem0Memory):
    score: float = Field(description="Lethe's fused rank score (higher is better), not a "
                         "cosine similarity.")


class Mem0MemoryList(BaseModel):
    results: list[Mem0Memory]


class Mem0SearchResults(BaseModel):
    results: list[Mem0Scored]


class Mem0History(BaseModel):
    id: uuid.UUID = Field(description="The version's ID.")
    memory_id: uuid.UUID
    old_memory: str | None
    new_memory: str
    event: Literal["ADD", "UPDATE"]
    created_at: datetime
    updated_at: datetime | None
    is_deleted: bool
    actor_id: str | None
    role: str | None


class Mem0Notice(BaseModel):
    message: str


class Mem0RunClosed(BaseModel):
    message: str
    session: SessionClosed = Field(description="What closing the run did, as "
                                   "`POST /v1/sessions/{session}/close` answers it.")


class Mem0ErasureRequested(BaseModel):
    message: str
    erasure_request: ErasureFiled = Field(description="Poll it at "
                                          "`GET /v1/erasure-requests/{id}`.")
