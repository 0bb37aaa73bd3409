from __future__ import annotations

from app.core.errors import Conflict, InvalidRequest, NotFound


class SourceExcluded(Conflict):
    slug, title = "source-excluded", "The cited source is excluded"


class ForgetsNothing(InvalidRequest):
    slug, title = "forgets-nothing", "That request would forget nothing"


class NoSourceToExclude(InvalidRequest):
    slug, title = "no-source", "The memory has no source to exclude"


class ExclusionNotFound(NotFound):
    slug, title = "exclusion-not-found", "No such source exclusion"
