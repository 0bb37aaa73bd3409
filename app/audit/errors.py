"""The audit domain's refusals."""

from __future__ import annotations

from app.core.errors import InvalidRequest


class InvalidCursor(InvalidRequest):
    slug, title = "invalid-cursor", "The cursor is not valid"
