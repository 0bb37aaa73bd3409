"""Registering artifacts, listing them, and their erasure: requested when a memory they
derive from is forgotten (`app/forgetting/cascade.py`), acknowledged by the product.

Statuses move one way: `active` → `erase_requested` → `erased`. Every move is audited with
the artifact's ID and its actor, never its `ref`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlmodel import Session, col, select

from app.artifacts.errors import ArtifactNotFound, InvalidDerivation, NoEraseRequested
from app.artifacts.models import Artifact, ArtifactStatus
from app.artifacts.schemas import ArtifactCreate, ArtifactList, ArtifactPublic
from app.audit import service as audit
from app.core import paging
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.memories import store as memories

KIND = "artifact"  # its `child_kind` in provenance edges, and its audit target kind
SETTLE_TASK = "erasure.settle"  # named, not imported: the erasure package imports this one


def register(
    session: Session, *, tenant_id: uuid.UUID, body: ArtifactCreate, actor: str,
    artifact_id: uuid.UUID | None = None,
) -> ArtifactPublic:
    """Register an artifact derived from ``body.derived_from`` (``artifact_id`` derived from
    the request's Idempotency-Key, if any: a late redelivery answers the artifact it made)."""
    if artifact_id is not None:
        existing = session.get(Artifact, artifact_id)
        if existing is not None and existing.tenant_id == tenant_id:
            return views(session, tenant_id=tenant_id, artifacts=[existing])[0]
    wanted = list(dict.fromkeys(body.derived_from))
    # Shared locks: a forget of one of them waits for this commit, and then its cascade sees
    # the new artifact; a forget that came first leaves a tombstone, refused here.
    found = memories.unforgotten(session, tenant_id=tenant_id, ids=wanted, lock=True)
    missing = [str(memory_id) for memory_id in wanted if memory_id not in found]
    if missing:
        raise InvalidDerivation("derived_from names unknown or forgotten memories: "
                                + ", ".join(missing[:10]))
    artifact = Artifact(id=artifact_id or uuid.uuid4(), tenant_id=tenant_id, kind=body.kind,
                        ref=body.ref)
    session.add(artifact)
    memories.record_provenance(session, tenant_id=tenant_id, child_id=artifact.id,
                               derived_from=wanted, child_kind=KIND)
    session.flush()
    audit.record(session, tenant_id=tenant_id, actor=actor, action="artifact.registered",
                 target_kind=KIND, target_id=artifact.id, to_state=artifact.status,
                 details={"derived_from": len(wanted)})
    return views(session, tenant_id=tenant_id, artifacts=[artifact])[0]


def get(session: Session, *, tenant_id: uuid.UUID, artifact_id: uuid.UUID) -> ArtifactPublic:
    artifact = _load(session, tenant_id, artifact_id)
    return views(session, tenant_id=tenant_id, artifacts=[artifact])[0]


def page(
    session: Session, *, tenant_id: uuid.UUID, derived_from: uuid.UUID | None,
    status: ArtifactStatus | None, limit: int, cursor: str | None = None,
) -> ArtifactList:
    """Artifacts oldest first by (created_at, id), optionally those derived directly from one
    memory or in one status. The cursor is the last ID of the previous page; one naming no
    artifact of this tenant ends the listing."""
    statement = select(Artifact).where(Artifact.tenant_id == tenant_id)
    if derived_from is not None:
        ids = memories.children(session, tenant_id=tenant_id, memory_ids=[derived_from],
                                child_kind=KIND)
        statement = statement.where(col(Artifact.id).in_(ids))
    if status is not None:
        statement = statement.where(Artifact.status == status.value)
    rows, next_cursor = paging.page(session, statement, Artifact, tenant_id=tenant_id,
                                    limit=limit, cursor=cursor)
    return ArtifactList(data=views(session, tenant_id=tenant_id, artifacts=rows),
                        next_cursor=next_cursor)


def withdraw(
    session: Session, *, tenant_id: uuid.UUID, artifact_id: uuid.UUID, actor: str
) -> None:
    """The product no longer holds the artifact. An active one is unregistered (row and
    provenance gone); one whose erasure was requested counts as erased, and its record stays
    as proof; an erased one stays as it is."""
    artifact = _load(session, tenant_id, artifact_id, for_update=True)
    if artifact.status == ArtifactStatus.erase_requested:
        _acknowledge(session, artifact, actor=actor, via="withdrawn")
    elif artifact.status == ArtifactStatus.active:
        memories.drop_provenance(session, tenant_id=tenant_id, child_kind=KIND,
                                 child_id=artifact.id)
        session.delete(artifact)
        session.flush()
        audit.record(session, tenant_id=tenant_id, actor=actor, action="artifact.withdrawn",
                     target_kind=KIND, target_id=artifact_id, from_state=artifact.status)


def acknowledge(
    session: Session, *, tenant_id: uuid.UUID, artifact_id: uuid.UUID, actor: str
) -> ArtifactPublic:
    """`POST /v1/artifacts/{id}/erased`: the product erased it. Again: the same answer; an
    artifact whose erasure nobody asked for → 409."""
    artifact = _load(session, tenant_id, artifact_id, for_update=True)
    if artifact.status == ArtifactStatus.active:
        raise NoEraseRequested("Nothing it was derived from has been forgotten.")
    if artifact.status == ArtifactStatus.erase_requested:
        _acknowledge(session, artifact, actor=actor, via="api")
    return views(session, tenant_id=tenant_id, artifacts=[artifact])[0]


def acknowledge_delivered(
    session: Session, *, tenant_id: uuid.UUID, artifact_id: uuid.UUID, actor: str
) -> bool:
    """A 2xx answer to its `artifact.erase_requested` event acknowledges the erasure; True
    when this acknowledged it (False: gone, or acknowledged already)."""
    artifact = session.exec(
        select(Artifact).where(Artifact.tenant_id == tenant_id, Artifact.id == artifact_id)
        .with_for_update().execution_options(populate_existing=True)
    ).first()
    if artifact is None or artifact.status != ArtifactStatus.erase_requested:
        return False
    _acknowledge(session, artifact, actor=actor, via="webhook")
    return True


def request_erasure(
    session: Session, *, tenant_id: uuid.UUID, artifact_ids: Sequence[uuid.UUID], actor: str,
    reason: str, erasure_request_id: uuid.UUID | None = None,
) -> list[Artifact]:
    """Ask for the erasure of these artifacts: the active ones among them become
    `erase_requested` (locked in ID order, audited) and are returned; the caller tells the
    product (`artifact.erase_requested`). With ``erasure_request_id`` every one still
    unacknowledged is tied to that erasure, which waits for its acknowledgement."""
    if not artifact_ids:
        return []
    rows = session.exec(
        select(Artifact).where(Artifact.tenant_id == tenant_id,
                               col(Artifact.id).in_(sorted(set(artifact_ids))))
        .order_by(col(Artifact.id)).with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    now = utcnow()
    changed = [artifact for artifact in rows if artifact.status == ArtifactStatus.active]
    if erasure_request_id is not None:
        for artifact in rows:
            if artifact.status != ArtifactStatus.erased and artifact.erasure_request_id is None:
                artifact.erasure_request_id = erasure_request_id
                session.add(artifact)
    for artifact in changed:
        artifact.status = ArtifactStatus.erase_requested.value
        artifact.erase_requested_at = now
        session.add(artifact)
    session.flush()
    for artifact in changed:
        audit.record(session, tenant_id=tenant_id, actor=actor,
                     action="artifact.erase_requested", target_kind=KIND,
                     target_id=artifact.id, from_state=ArtifactStatus.active.value,
                     to_state=artifact.status, reason=reason, flush=False)
    session.flush()
    return changed


def views(
    session: Session, *, tenant_id: uuid.UUID, artifacts: Sequence[Artifact]
) -> list[ArtifactPublic]:
    """The public shape of these artifacts, in the order given."""
    sources = memories.parents(session, tenant_id=tenant_id, child_kind=KIND,
                               child_ids=[artifact.id for artifact in artifacts])
    return [
        ArtifactPublic(
            id=a.id, kind=a.kind, ref=a.ref, derived_from=sources.get(a.id, []),
            status=ArtifactStatus(a.status), created_at=a.created_at,
            erase_requested_at=a.erase_requested_at, acknowledged_at=a.acknowledged_at,
        )
        for a in artifacts
    ]


def awaited_by(session: Session, *, tenant_id: uuid.UUID, erasure_request_id: uuid.UUID
               ) -> int:
    """How many artifacts the erasure still waits for (erasure asked, not acknowledged)."""
    return len(session.exec(
        select(Artifact.id).where(Artifact.tenant_id == tenant_id,
                                  Artifact.erasure_request_id == erasure_request_id,
                                  Artifact.status == ArtifactStatus.erase_requested.value)
    ).all())


def _acknowledge(session: Session, artifact: Artifact, *, actor: str, via: str) -> None:
    artifact.status = ArtifactStatus.erased.value
    artifact.acknowledged_at = utcnow()
    session.add(artifact)
    session.flush()
    if artifact.erasure_request_id is not None and not awaited_by(
            session, tenant_id=artifact.tenant_id,
            erasure_request_id=artifact.erasure_request_id):
        # The last one this erasure waited for: it can complete. (Two acknowledging at once
        # may each still see the other; the erasure sweep settles that within a minute.)
        enqueue_job(SETTLE_TASK, artifact.erasure_request_id, artifact.tenant_id)
    audit.record(session, tenant_id=artifact.tenant_id, actor=actor, action="artifact.erased",
                 target_kind=KIND, target_id=artifact.id,
                 from_state=ArtifactStatus.erase_requested.value, to_state=artifact.status,
                 details={"acknowledged_by": via})


def _load(
    session: Session, tenant_id: uuid.UUID, artifact_id: uuid.UUID, *, for_update: bool = False
) -> Artifact:
    statement = select(Artifact).where(Artifact.tenant_id == tenant_id,
                                       Artifact.id == artifact_id)
    if for_update:
        statement = statement.with_for_update().execution_options(populate_existing=True)
    artifact = session.exec(statement).first()
    if artifact is None:
        raise ArtifactNotFound()
    return artifact


