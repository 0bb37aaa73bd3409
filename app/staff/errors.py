from __future__ import annotations

from app.core.errors import Conflict, NotFound


class StaffNotFound(NotFound):
    slug, title = "staff-not-found", "No such staff member"


class StaffEmailTaken(Conflict):
    slug, title = "staff-email-taken", "A staff member with this email exists"


class LockShared(Conflict):
    slug, title = "lock-shared", "The lock is shared with another organisation's account"


class LastOfficer(Conflict):
    slug, title = "last-officer", "The tenant's last officer cannot be demoted or removed"
