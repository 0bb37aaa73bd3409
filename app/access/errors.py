"""The access requests' refusals."""

from __future__ import annotations

from app.core.errors import Conflict, NotFound


class AccessRequestNotFound(NotFound):
    slug, title = "not-found", "No such access request"

    def __init__(self, detail: str = "No such access request.") -> None:
        super().__init__(detail)


class ExportNotReady(Conflict):
    slug, title = "export-not-ready", "The export is not ready"

    def __init__(self, status: str) -> None:
        detail = ("The export failed; file a new access request." if status == "failed"
                  else "The export is being prepared; poll the operation.")
        # `status` is the problem's HTTP status; the operation's goes beside it.
        super().__init__(detail, operation_status=status)
