"""The memories domain's refusals."""

from __future__ import annotations

import uuid

from app.core.errors import Conflict, InvalidRequest, LetheError, NotFound


class MemoryNotFound(NotFound):
    slug, title = "not-found", "No such memory"

    def __init__(self) -> None:
        super().__init__("No such memory.")


class RevisionMismatch(LetheError):
    status, slug, title = 412, "revision-mismatch", "The memory changed since that revision"

    def __init__(self, current_revision: int | None, detail: str | None = None) -> None:
        super().__init__(
            detail or (f"The memory is at revision {current_revision}." if current_revision
                       else "No live memory holds this slot."),
            current_revision=current_revision,
        )


class IfMatchRequired(LetheError):
    status, slug, title = 428, "if-match-required", "If-Match is required"


class InvalidIfMatch(LetheError):
    status, slug, title = 400, "invalid-if-match", "If-Match is not a revision ETag"


class InvalidReference(InvalidRequest):
    slug, title = "invalid-reference", "A referenced memory does not exist or is not usable"


class InvalidCursor(InvalidRequest):
    slug, title = "invalid-cursor", "The cursor is not valid"


class IllegalTransition(Conflict):
    slug, title = "illegal-transition", "The memory cannot move to that state"


class NotEditable(Conflict):
    slug, title = "memory-not-editable", "The memory cannot be edited in its state"


class LegalHold(Conflict):
    """A legal hold covers the memory: nothing may destroy its content (docs/api.md, "Legal
    holds"). Raised by the lifecycle's `destroy_content`, the one place content leaves."""

    slug, title = "legal-hold", "A legal hold covers this memory"

    def __init__(self, memory_id: uuid.UUID) -> None:
        super().__init__(
            f"Memory {memory_id} is under a legal hold; its content cannot be destroyed until "
            "the hold is released. Nothing was changed.", memory_id=str(memory_id))


class NotWorking(Conflict):
    slug, title = "not-working-memory", "Only a working memory can be promoted"


class ExpiryInPast(InvalidRequest):
    slug, title = "expiry-in-past", "expires_at is not in the future"

    def __init__(self) -> None:
        super().__init__("expires_at must be in the future (or null, which does not expire).")


class MemoryExpired(Conflict):
    """An expired memory is not revived by an edit that leaves its expiry where it is
    (docs/decisions.md, "Expiry")."""

    slug, title = "memory-expired", "The memory has expired"

    def __init__(self, memory_id: uuid.UUID) -> None:
        super().__init__(
            f"Memory {memory_id} has expired. Send a new `expires_at` in the future (or null) "
            "with the correction to revive it; nothing was changed.", memory_id=str(memory_id))
