"""Webhooks and their delivery log as the API accepts and shows them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field, Strict, field_validator

from app.core.schemas import StrictModel
from app.webhooks.models import DeliveryStatus, WebhookEvent

# Bodies arrive as parsed JSON, where an enum member can only be its string value.
EventIn = Annotated[WebhookEvent, Strict(False)]


class WebhookCreate(StrictModel):
    url: str = Field(
        min_length=1, max_length=2000, pattern=r"^[hH][tT][tT][pP][sS]?://[^\s\x00]+$",
        description="An http(s) URL that resolves only to public addresses.",
    )
    events: list[EventIn] = Field(min_length=1, max_length=len(WebhookEvent))

    @field_validator("events")
    @classmethod
    def _distinct(cls, events: list[WebhookEvent]) -> list[WebhookEvent]:
        return list(dict.fromkeys(events))


class WebhookPublic(BaseModel):
    id: uuid.UUID
    url: str
    events: list[WebhookEvent]
    created_at: datetime


class WebhookCreated(WebhookPublic):
    secret: str | None = Field(
        description="`whsec_` + base64: verify deliveries with it (Standard Webhooks). Shown "
        "once; a replay of the request answers null.",
    )


class WebhookList(BaseModel):
    data: list[WebhookPublic]
    next_cursor: str | None = None


class DeliveryPublic(BaseModel):
    id: uuid.UUID = Field(description="The `webhook-id` header, the same on every retry.")
    event: WebhookEvent
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: datetime | None
    last_attempt_at: datetime | None
    delivered_at: datetime | None
    created_at: datetime


class DeliveryList(BaseModel):
    data: list[DeliveryPublic]
    next_cursor: str | None = None
