"""Excluded sources: every later write citing one is refused, and the refusal is audited."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlmodel import Session, col, select

from app.audit import service as audit
from app.core import paging, uow
from app.keys import sealed_json
from app.keys.subjects import row_aad
from app.sources.errors import ExclusionNotFound, SourceExcluded
from app.sources.models import SourceExclusion
from app.sources.schemas import ExclusionList, ExclusionPublic
from app.tenants import digests as tenant_digests


def is_excluded(session: Session, *, tenant_id: uuid.UUID, source: str | None) -> bool:
    if source is None:
        return False
    found = session.exec(
        select(SourceExclusion.id).where(
            SourceExclusion.tenant_id == tenant_id,
            SourceExclusion.source_digest == target(session, tenant_id, source),
        )
    ).first()
    return found is not None


def excluded_among(
    session: Session, *, tenant_id: uuid.UUID, sources: Collection[str | None]
) -> set[str]:
    """Which of ``sources`` are excluded, in one statement (a bulk write's items)."""
    named = {source for source in sources if source is not None}
    if not named:
        return set()
    by_digest = {target(session, tenant_id, source): source for source in named}
    found = session.exec(select(SourceExclusion.source_digest).where(
        SourceExclusion.tenant_id == tenant_id,
        col(SourceExclusion.source_digest).in_(sorted(by_digest)))).all()
    return {by_digest[digest] for digest in found}


def target(session: Session, tenant_id: uuid.UUID, source: str) -> str:
    """How audit events and exclusions name a source: its keyed digest. The audit chain
    outlives erasures and cannot be rewritten, so it never holds the plain name."""
    return tenant_digests.digest(session, tenant_id=tenant_id, value=source)


def refuse_if_excluded(
    session: Session, *, tenant_id: uuid.UUID, source: str | None, actor: str, action: str
) -> None:
    """Raise `SourceExcluded` when ``source`` is excluded, leaving an audit trace.

    The refusal rolls the request back, so its trace is written in a transaction of its own.
    """
    if not is_excluded(session, tenant_id=tenant_id, source=source):
        return
    with uow.unit_of_work(tenant_id) as trace:
        audit.record(trace, tenant_id=tenant_id, actor=actor, action="write.refused",
                     target_kind="source", target_id=target(trace, tenant_id, source or ""),
                     reason="source excluded", details={"attempted": action})
    raise SourceExcluded(f"Source {source!r} is excluded; nothing was stored.")


def exclude(
    session: Session, *, tenant_id: uuid.UUID, source: str, reason: str | None, actor: str
) -> tuple[SourceExclusion, bool]:
    """Exclude ``source`` (idempotent); returns the exclusion and whether it is new."""
    hashed = target(session, tenant_id, source)
    existing = session.exec(
        select(SourceExclusion).where(
            SourceExclusion.tenant_id == tenant_id, SourceExclusion.source_digest == hashed
        )
    ).first()
    if existing is not None:
        return existing, False
    exclusion = SourceExclusion(tenant_id=tenant_id, source_digest=hashed, reason=reason)
    exclusion.sealed_source = sealed_json.seal_tenant_text(tenant_id, source,
                                                           aad=_aad(exclusion.id))
    session.add(exclusion)
    session.flush()
    audit.record(session, tenant_id=tenant_id, actor=actor, action="source.excluded",
                 target_kind="source", target_id=hashed, reason=(reason or "")[:500] or None)
    return exclusion, True


def exclude_digests(
    session: Session, *, tenant_id: uuid.UUID, hashed: Collection[str], reason: str,
    actor: str,
) -> int:
    """Exclude sources known only by digest (an erasure's), and empty the plain name of any
    existing exclusion among them; returns how many exclusions are new."""
    if not hashed:
        return 0
    existing = {row.source_digest: row for row in session.exec(
        select(SourceExclusion).where(SourceExclusion.tenant_id == tenant_id,
                                      col(SourceExclusion.source_digest).in_(sorted(hashed))))}
    for row in existing.values():
        row.source = row.sealed_source = None
        session.add(row)
    new = sorted(set(hashed) - set(existing))
    session.add_all([SourceExclusion(tenant_id=tenant_id, source=None, source_digest=value,
                                     reason=reason) for value in new])
    session.flush()
    for value in new:
        audit.record(session, tenant_id=tenant_id, actor=actor, action="source.excluded",
                     target_kind="source", target_id=value, reason=reason, flush=False)
    session.flush()
    return len(new)


def exclusions(
    session: Session, *, tenant_id: uuid.UUID, limit: int, cursor: str | None = None
) -> ExclusionList:
    """One page of the tenant's exclusions, oldest first by (created_at, id).

    The cursor is the last ID of the previous page; one that names no exclusion of this
    tenant (removed since, or never one) ends the listing.
    """
    statement = select(SourceExclusion).where(SourceExclusion.tenant_id == tenant_id)
    rows, next_cursor = paging.page(session, statement, SourceExclusion, tenant_id=tenant_id,
                                    limit=limit, cursor=cursor)
    return ExclusionList(
        data=[public(row) for row in rows],
        next_cursor=next_cursor,
    )


def naming(
    session: Session, *, tenant_id: uuid.UUID, digests: Collection[str]
) -> list[ExclusionPublic]:
    """The exclusions of the sources of these digests (as memories store their sources),
    oldest first (an access export lists a subject's)."""
    if not digests:
        return []
    hashed = sorted(digests)
    rows = session.exec(
        select(SourceExclusion).where(SourceExclusion.tenant_id == tenant_id,
                                      col(SourceExclusion.source_digest).in_(hashed))
        .order_by(col(SourceExclusion.created_at), col(SourceExclusion.id))
    ).all()
    return [public(row) for row in rows]


def public(row: SourceExclusion) -> ExclusionPublic:
    """An exclusion as shown: its source opened from its sealed copy (none once an erasure
    emptied it)."""
    shown = ExclusionPublic.model_validate(row, from_attributes=True)
    shown.source = sealed_json.open_tenant_text(row.tenant_id, row.sealed_source,
                                                aad=_aad(row.id))
    return shown


def _aad(exclusion_id: uuid.UUID) -> bytes:
    return row_aad("source_exclusion", exclusion_id, "source")


def remove(session: Session, *, tenant_id: uuid.UUID, exclusion_id: uuid.UUID,
           actor: str) -> None:
    exclusion = session.get(SourceExclusion, exclusion_id)
    if exclusion is None or exclusion.tenant_id != tenant_id:
        raise ExclusionNotFound()
    session.delete(exclusion)
    session.flush()
    audit.record(session, tenant_id=tenant_id, actor=actor, action="source.readmitted",
                 target_kind="source", target_id=exclusion.source_digest)
