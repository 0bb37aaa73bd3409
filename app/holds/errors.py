"""The holds domain's refusals (a held memory's refusal, `LegalHold`, is the lifecycle's:
`app/memories/errors.py`)."""

from __future__ import annotations

from app.core.errors import NotFound


class HoldNotFound(NotFound):
    slug, title = "legal-hold-not-found", "No such legal hold"
