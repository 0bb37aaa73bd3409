"""The webhooks domain's refusals."""

from __future__ import annotations

from app.core.errors import InvalidRequest, NotFound


class WebhookNotFound(NotFound):
    slug, title = "not-found", "No such webhook"

    def __init__(self) -> None:
        super().__init__("No such webhook.")


class UnsafeWebhookUrl(InvalidRequest):
    slug, title = "webhook-url-refused", "The webhook URL may not be called"
