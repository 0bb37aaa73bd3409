from __future__ import annotations

from app.core.errors import Conflict, NotFound


class ErasureNotFound(NotFound):
    slug, title = "erasure-request-not-found", "No such erasure request"


class ErasureStateConflict(Conflict):
    slug, title = "erasure-state-conflict", "The erasure request cannot do that in its status"


class ReceiptNotReady(Conflict):
    slug, title = "receipt-not-ready", "The erasure has not produced a receipt yet"
