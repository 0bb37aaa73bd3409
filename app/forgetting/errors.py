from __future__ import annotations

from app.core.errors import InvalidRequest


class ForgetsNothing(InvalidRequest):
    slug, title = "forgets-nothing", "That request would forget nothing"


class NoSourceToExclude(InvalidRequest):
    slug, title = "no-source", "The memory has no source to exclude"
