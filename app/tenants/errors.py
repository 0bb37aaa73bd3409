from __future__ import annotations

from app.core.errors import Conflict, NotFound


class ApiKeyNotFound(NotFound):
    slug, title = "api-key-not-found", "No such API key"


class LastComplianceKey(Conflict):
    slug, title = "last-compliance-key", "The tenant's last compliance key cannot be deleted"
