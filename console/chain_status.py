"""The audit chain's verification as the pages show it, without re-reading the whole chain
on every page load.

A full verification is remembered per tenant (in this process) for `FULL_EVERY`; meanwhile a
page checks only the events appended since, linked to the remembered head. Audit rows are
append-only for the application (a trigger refuses changes), so what was verified stays so
unless someone with the owner's rights edits the table; the full pass that follows catches
that, and the audit page can ask for one at once.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlmodel import Session

from app.audit import service as audit
from app.audit.schemas import VerifyResult

FULL_EVERY = timedelta(minutes=10)
_lock = threading.Lock()
_full: dict[uuid.UUID, tuple[VerifyResult, datetime]] = {}


@dataclass(frozen=True)
class ChainStatus:
    result: VerifyResult
    # When every event of the chain was last recomputed; the rest since then, just now.
    fully_verified_at: datetime


def status(session: Session, *, tenant_id: uuid.UUID, full: bool = False) -> ChainStatus:
    now = datetime.now(UTC)
    with _lock:
        known = _full.get(tenant_id)
    if not full and known is not None and known[0].ok and now - known[1] < FULL_EVERY:
        return ChainStatus(audit.verify(session, tenant_id=tenant_id, after=known[0]),
                           fully_verified_at=known[1])
    result = audit.verify(session, tenant_id=tenant_id)
    with _lock:
        _full[tenant_id] = (result, now)
    return ChainStatus(result=result, fully_verified_at=now)
