"""Tenant settings as the API shows and accepts them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from app.core.schemas import INT32_MAX, PublicModel, StrictModel, whole_number
from app.text.supersession import DEFAULT as SUPERSESSION_DEFAULT


class HalfLives(StrictModel):
    structural: float = Field(365.0, gt=0, le=36500)
    preferential: float = Field(180.0, gt=0, le=36500)
    procedural: float = Field(90.0, gt=0, le=36500)
    situational: float = Field(7.0, gt=0, le=36500)
    working_seconds: float = Field(
        900.0, gt=0, le=31_536_000,
        description="Half-life of `working` memories (an agent's scratch), in seconds.",
    )

    def seconds(self, volatility: str) -> float:
        """The half-life of a volatility class in seconds: the one reading of these fields."""
        if volatility == "working":
            return self.working_seconds
        return float(getattr(self, volatility)) * 86_400.0


class Working(StrictModel):
    max_half_lives: float = Field(
        4.0, gt=0, le=1000,
        description="Recall flags a working memory `stale` past one half-life and omits it "
        "past this many.",
    )


class Retention(StrictModel):
    deprecated_days: float = Field(
        30.0, gt=0, le=36500, description="Days a deprecated memory stays before quarantine."
    )
    quarantine_days: float = Field(
        30.0, gt=0, le=36500, description="Days a quarantined memory stays before deletion."
    )


class Supersession(StrictModel):
    """Cosine bands of the supersession rule (app/text/supersession.py)."""

    change_word_min_similarity: float = Field(
        SUPERSESSION_DEFAULT.change_word_min, ge=0, le=1,
        description="Cosine above which a new memory that says something changed (\"moved\", "
        "\"now\", \"no longer\") and names another value or a shared specific word "
        "contradicts a live one.",
    )
    contradiction_min_similarity: float = Field(
        SUPERSESSION_DEFAULT.contradiction_min, ge=0, le=1,
        description="Cosine above which a changed value or a flipped negation over the same "
        "words contradicts a live memory.",
    )
    restatement_min_similarity: float = Field(
        SUPERSESSION_DEFAULT.restatement_min, ge=0, le=1,
        description="Cosine above which a new memory with no conflicting word restates a live "
        "one (consolidation collapses such pairs).",
    )

    @model_validator(mode="after")
    def _ordered(self) -> Supersession:
        if not (self.change_word_min_similarity <= self.contradiction_min_similarity
                <= self.restatement_min_similarity):
            raise ValueError(
                "need change_word_min_similarity ≤ contradiction_min_similarity "
                "≤ restatement_min_similarity"
            )
        return self


class ForgetCascade(StrictModel):
    cascade: Literal["flag", "forget"] = Field(
        "flag",
        description="What a single forget does to the live memories derived from the "
        "forgotten one: `flag` makes them suspect with flag `source-forgotten`, `forget` "
        "forgets them too (transitively).",
    )


class Retractions(StrictModel):
    keep_about: bool = Field(
        True,
        description="Keep the caller's `about` phrase on retraction records, so the assistant "
        "knows what not to learn again; false keeps only their date and count.",
    )


class Limits(StrictModel):
    """Per-key request rate and per-tenant quotas; every refusal is problem+json."""

    rate_limit: Literal["default", "on", "off"] = Field(
        "default",
        description="Per-key rate limiting: `on`, `off`, or `default` (on only when the "
        "deployment runs in production).",
    )
    requests_per_minute: int = Field(
        600, ge=1, le=1_000_000,
        description="Requests a key may send per minute when rate limited; more → 429 with "
        "Retry-After.",
    )
    max_memories: int = Field(
        0, ge=0, le=INT32_MAX,
        description="Memories (not forgotten) the tenant may hold; 0: no quota. A write that "
        "would add one more → 409 `memory-quota-exceeded`.",
    )
    max_ingest_bytes: int = Field(
        1_048_576, ge=1, le=INT32_MAX,
        description="Largest `POST /v1/ingest` body; larger → 413 `ingest-too-large`.",
    )


class Erasure(StrictModel):
    due_days: float = Field(
        30.0, gt=0, le=3650,
        description="Days from filing to an erasure request's `due_at` (GDPR: one month).",
    )
    require_approval: bool = Field(
        False,
        description="File erasure requests as `pending_approval`, so a compliance officer "
        "approves each before the cascade runs.",
    )


class Console(StrictModel):
    session_minutes: float = Field(
        30.0, ge=1, le=1440,
        description="Minutes of inactivity after which a console session expires.",
    )


class SettingsPublic(PublicModel):
    half_lives: HalfLives
    retention: Retention
    working: Working
    detect_forget_requests: bool
    supersession: Supersession
    forget: ForgetCascade
    retractions: Retractions
    erasure: Erasure
    console: Console
    limits: Limits


class HalfLivesPatch(StrictModel):
    structural: float | None = Field(None, gt=0, le=36500)
    preferential: float | None = Field(None, gt=0, le=36500)
    procedural: float | None = Field(None, gt=0, le=36500)
    situational: float | None = Field(None, gt=0, le=36500)
    working_seconds: float | None = Field(None, gt=0, le=31_536_000)


class WorkingPatch(StrictModel):
    max_half_lives: float | None = Field(None, gt=0, le=1000)


class RetentionPatch(StrictModel):
    deprecated_days: float | None = Field(None, gt=0, le=36500)
    quarantine_days: float | None = Field(None, gt=0, le=36500)


class SupersessionPatch(StrictModel):
    change_word_min_similarity: float | None = Field(None, ge=0, le=1)
    contradiction_min_similarity: float | None = Field(None, ge=0, le=1)
    restatement_min_similarity: float | None = Field(None, ge=0, le=1)


class ForgetCascadePatch(StrictModel):
    cascade: Literal["flag", "forget"] | None = None


class RetractionsPatch(StrictModel):
    keep_about: bool | None = None


class LimitsPatch(StrictModel):
    rate_limit: Literal["default", "on", "off"] | None = None
    requests_per_minute: int | None = Field(None, ge=1, le=1_000_000)
    max_memories: int | None = Field(None, ge=0, le=INT32_MAX)
    max_ingest_bytes: int | None = Field(None, ge=1, le=INT32_MAX)

    # JSON does not tell 600 from 600.0 (JSON Schema calls both integers).
    _whole = field_validator("requests_per_minute", "max_memories", "max_ingest_bytes",
                             mode="before")(whole_number)


class ErasurePatch(StrictModel):
    due_days: float | None = Field(None, gt=0, le=3650)
    require_approval: bool | None = None


class ConsolePatch(StrictModel):
    session_minutes: float | None = Field(None, ge=1, le=1440)


class SettingsPatch(StrictModel):
    """Any subset; nested objects merge field by field."""

    half_lives: HalfLivesPatch | None = None
    retention: RetentionPatch | None = None
    working: WorkingPatch | None = None
    detect_forget_requests: bool | None = None
    supersession: SupersessionPatch | None = None
    forget: ForgetCascadePatch | None = None
    retractions: RetractionsPatch | None = None
    erasure: ErasurePatch | None = None
    console: ConsolePatch | None = None
    limits: LimitsPatch | None = None
