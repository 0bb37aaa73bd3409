"""One item of a bulk write (`POST /v1/ingest`'s task, `POST /v1/memories/batch`), applied
in a savepoint of the caller's transaction so that its refusal undoes it alone. The items'
audit events (`memory.created`, `memory.corrected`) are gathered and appended together after
the last item, in one statement (`record`).

An excluded source is checked and its refusal audited here, in the caller's transaction:
`service.create` would audit it in a transaction of its own, which waits for the tenant's
audit chain lock that an earlier item of this transaction may already hold.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlmodel import Session

from app.audit import service as audit
from app.core.errors import LetheError
from app.memories import lifecycle, service
from app.sources import service as sources
from app.sources.errors import SourceExcluded


@dataclass(frozen=True)
class Refused:
    error: LetheError


def excluded(session: Session, *, tenant_id: uuid.UUID,
             writes: Sequence[service.Prepared]) -> set[str]:
    """The excluded sources among the items', read once for `write_item`."""
    return sources.excluded_among(session, tenant_id=tenant_id,
                                  sources=[write.body.source for write in writes])


def write_item(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID | None,
    write: service.Prepared, actor: str, attempted: str, excluded: Collection[str],
    events: list[audit.Entry],
) -> service.Written | Refused:
    """The item written, or its refusal; ``excluded``: the sources `excluded` found; its
    audit event is added to ``events`` for `record`. An item already applied (``memory_id``
    derived from the request's key) answers what it did, even if its source was excluded
    since, and adds no event."""
    if memory_id is not None:
        done = service.already_written(session, tenant_id=tenant_id, memory_id=memory_id)
        if done is not None:
            return done
    source = write.body.source
    if source is not None and source in excluded:
        audit.record(session, tenant_id=tenant_id, actor=actor, action="write.refused",
                     target_kind="source",
                     target_id=sources.target(session, tenant_id, source or ""),
                     reason="source excluded", details={"attempted": attempted})
        return Refused(SourceExcluded(f"Source {source!r} is excluded; nothing was stored."))
    mine: list[audit.Entry] = []
    try:
        with session.begin_nested():
            written = service.create(session, tenant_id=tenant_id, body=write.body,
                                     embedding=write.embedding, actor=actor,
                                     memory_id=memory_id, judged=write.judged, checked=True,
                                     events=mine)
    except LetheError as exc:
        # A refusal of this item only (a stale supersedes, a revision mismatch …).
        return Refused(exc)
    events += mine  # only once its savepoint is released: a refused item leaves no event
    return written


def record(session: Session, *, tenant_id: uuid.UUID, events: list[audit.Entry]) -> None:
    """The items' audit events, appended in one statement after the last item."""
    lifecycle.record(session, tenant_id=tenant_id, entries=events)
