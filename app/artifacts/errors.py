"""The artifacts domain's refusals."""

from __future__ import annotations

from app.core.errors import Conflict, InvalidRequest, NotFound


class ArtifactNotFound(NotFound):
    slug, title = "not-found", "No such artifact"

    def __init__(self) -> None:
        super().__init__("No such artifact.")


class InvalidDerivation(InvalidRequest):
    slug, title = "invalid-reference", "A referenced memory does not exist or is not usable"


class NoEraseRequested(Conflict):
    slug, title = "no-erase-requested", "No erasure was requested for this artifact"
