from __future__ import annotations

from app.core.errors import Conflict, NotFound


class SourceExcluded(Conflict):
    slug, title = "source-excluded", "The cited source is excluded"


class ExclusionNotFound(NotFound):
    slug, title = "exclusion-not-found", "No such source exclusion"
