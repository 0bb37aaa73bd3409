"""Writing memories: remember, correct, revert. Services flush; the unit of work commits."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlmodel import Session, col, func, select

from app.core.models import utcnow
from app.embeddings.runtime import embedder
from app.forgetting import sources
from app.lifecycle.transitions import transition
from app.memories import contradictions, queries
from app.memories.errors import (
    IfMatchRequired,
    InvalidIfMatch,
    InvalidReference,
    NotEditable,
    RevisionMismatch,
)
from app.memories.models import LIVE_STATES, Memory, MemoryState, MemoryVersion, ProvenanceEdge
from app.memories.schemas import Effects, MemoryCreate, MemoryPatch, MemoryWritten

IF_MATCH = re.compile(r'^\s*"(\d{1,9})"\s*$')
LIVE = [state.value for state in LIVE_STATES]


# -- prepare: the slow part of a write, before its unit of work opens -------------------------


@dataclass(frozen=True)
class Prepared:
    """A remember's embedding and the judge's verdicts on its borderline pairs (for `create`)."""

    body: MemoryCreate
    embedding: list[float]
    judged: contradictions.Judged


def prepare(*, tenant_id: uuid.UUID, bodies: Sequence[MemoryCreate]) -> list[Prepared]:
    """Embed the texts and ask the optional judge model about the pairs the contradiction
    rule is unsure of: slow work, so done holding no connection, before the write's own
    transaction opens (`POST /v1/memories` and ingestion alike)."""
    model = embedder()
    texts = [body.text for body in bodies]
    # One text goes through embed_one, which batches concurrent requests' texts together.
    vectors = [model.embed_one(texts[0])] if len(texts) == 1 else (
        model.embed(texts) if texts else [])
    return [Prepared(body=body, embedding=vector, judged=contradictions.judge_borderline(
        tenant_id=tenant_id, subject=body.subject, key=body.key, supersedes=body.supersedes,
        new_text=body.text, embedding=vector,
    )) for body, vector in zip(bodies, vectors, strict=True)]


@dataclass(frozen=True)
class PreparedPatch:
    patch: MemoryPatch
    embedding: list[float] | None


def prepare_patch(patch: MemoryPatch) -> PreparedPatch:
    """A correction's new text embedded before its transaction opens (for `update`)."""
    embedding = embedder().embed_one(patch.text) if patch.text is not None else None
    return PreparedPatch(patch=patch, embedding=embedding)


@dataclass(frozen=True)
class Written:
    memory: MemoryWritten | None
    created: bool
    # A redelivered create whose memory was forgotten since: done, nothing stored again.
    forgotten_id: uuid.UUID | None = None


def expected_revision(if_match: str | None) -> int:
    """The revision an `If-Match: "<revision>"` header names."""
    if if_match is None:
        raise IfMatchRequired('Send `If-Match: "<revision>"` with the ETag you last read.')
    match = IF_MATCH.match(if_match)
    if match is None:
        raise InvalidIfMatch('If-Match must be one strong ETag such as "3".')
    return int(match.group(1))


def create(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    body: MemoryCreate,
    embedding: list[float],
    actor: str,
    memory_id: uuid.UUID | None = None,
    judged: contradictions.Judged | None = None,
) -> Written:
    """Remember: a new memory, or a new version of the live memory holding the same slot.

    Live memories of the subject that the new text contradicts become suspect (flag
    `contradicted`); ``judged`` holds a judge model's verdicts on borderline pairs, asked
    before the transaction opened (`contradictions.judge_borderline`).
    """
    sources.refuse_if_excluded(session, tenant_id=tenant_id, source=body.source, actor=actor,
                               action="memory.create")
    if memory_id is not None:
        existing = session.exec(
            select(Memory).where(Memory.id == memory_id, Memory.tenant_id == tenant_id)
        ).first() or _slot_written_by(session, tenant_id=tenant_id, write_id=memory_id)
        if existing is not None and existing.state == MemoryState.forgotten:
            return Written(None, created=True, forgotten_id=existing.id)
        if existing is not None:
            # A redelivery after its operation record expired: it already happened.
            return Written(MemoryWritten(**queries.view(session, existing).model_dump(),
                                         effects=Effects()), created=True)
    _check_derived_from(session, tenant_id=tenant_id, ids=body.derived_from)
    wanted = list(dict.fromkeys(body.supersedes))
    slot_id = _slot_holder(session, tenant_id=tenant_id, body=body) if body.key else None
    limits = contradictions.thresholds(session, tenant_id=tenant_id)
    # The memory a write adds a version to, and those it defeats explicitly, are not
    # contradicted by it.
    nearby = contradictions.nearest(
        session, tenant_id=tenant_id, subject=body.subject, embedding=embedding,
        exclude=[*wanted, *([slot_id] if slot_id else [])], floor=limits.change_word_min,
    )
    # Every row this write may change, locked in one statement in id order before anything
    # is audited (an audit append holds the tenant's chain lock until commit): two writes, or
    # a write and a consolidation, never wait for each other in a cycle.
    rows = _lock(session, tenant_id=tenant_id,
                 ids=[*wanted, *([slot_id] if slot_id else []), *(c.id for c in nearby)])
    targets = _usable(rows, wanted)
    slot = rows.get(slot_id) if slot_id is not None else None
    if slot is not None and (slot.state not in LIVE or slot.id in {t.id for t in targets}):
        slot = None  # gone meanwhile, or explicitly defeated: the new memory takes the slot
    if body.expected_revision is not None and (
        slot is None or slot.revision != body.expected_revision
    ):
        raise RevisionMismatch(slot.revision if slot else None)
    if slot is not None:
        memory = slot
        version = append_version(session, memory, body.text, embedding)
        # The write's derived ID marks the version, so a redelivery after the operation
        # record expired finds it (see _slot_written_by) instead of adding another.
        version.operation_id = memory_id
        _apply(memory, body)
        memory.revision += 1
        created = False
    else:
        memory = Memory(
            id=memory_id or uuid.uuid4(), tenant_id=tenant_id, subject=body.subject,
            key=body.key, volatility=body.volatility.value, source=body.source,
            depends_on=dict(body.depends_on), meta=dict(body.metadata),
        )
        created = True
    superseded: list[uuid.UUID] = []
    for target in targets:
        if target.id != memory.id:
            transition(session, target, MemoryState.deprecated, reason="superseded",
                       actor=actor, superseded_by=memory.id)
            superseded.append(target.id)
    if created:
        session.add(memory)
        session.flush()
        append_version(session, memory, body.text, embedding)
    memory.updated_at = utcnow()
    session.add(memory)
    _record_provenance(session, memory, source=body.source, derived_from=body.derived_from)
    suspected = contradictions.flag(
        session, memory_id=memory.id, new_text=body.text, found=nearby, rows=rows,
        limits=limits, judged=judged or {}, actor=actor,
    )
    session.flush()
    effects = Effects(superseded=superseded, suspected=suspected)
    return Written(
        MemoryWritten(**queries.view(session, memory).model_dump(), effects=effects), created
    )


def update(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    memory_id: uuid.UUID,
    if_match: str | None,
    patch: MemoryPatch,
    embedding: list[float] | None,
) -> MemoryWritten:
    """Correct: compare-and-set on the revision; a new text appends a version."""
    memory = _lock_for_edit(session, tenant_id=tenant_id, memory_id=memory_id, if_match=if_match)
    if patch.changes_nothing():
        # No change, no new revision: the revision counts changes, not requests.
        return MemoryWritten(**queries.view(session, memory).model_dump(), effects=Effects())
    if patch.text is not None:
        append_version(session, memory, patch.text, embedding)
    if patch.volatility is not None:
        memory.volatility = patch.volatility.value
    if patch.depends_on is not None:
        memory.depends_on = dict(patch.depends_on)
    if patch.metadata is not None:
        memory.meta = dict(patch.metadata)
    return _bumped(session, memory)


def revert(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, if_match: str | None,
    seq: int,
) -> MemoryWritten:
    """Point at an earlier version again; the revision still moves forward (no ABA)."""
    memory = _lock_for_edit(session, tenant_id=tenant_id, memory_id=memory_id, if_match=if_match)
    version = session.exec(
        select(MemoryVersion).where(MemoryVersion.memory_id == memory.id,
                                    MemoryVersion.seq == seq)
    ).first()
    if version is None:
        raise InvalidReference(f"This memory has no version {seq}.")
    memory.current_version_id = version.id
    return _bumped(session, memory)


def _bumped(session: Session, memory: Memory) -> MemoryWritten:
    memory.revision += 1
    memory.updated_at = utcnow()
    session.add(memory)
    session.flush()
    return MemoryWritten(**queries.view(session, memory).model_dump(), effects=Effects())


def _lock_for_edit(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, if_match: str | None
) -> Memory:
    # A missing memory is 404 before any precondition is judged; the row lock makes the
    # revision comparison exact under concurrent edits.
    memory = queries.load(session, tenant_id=tenant_id, memory_id=memory_id, for_update=True)
    if memory.revision != expected_revision(if_match):
        raise RevisionMismatch(memory.revision)
    if memory.state == MemoryState.quarantined:
        raise NotEditable("A quarantined memory is kept for audit; it cannot be edited.")
    return memory


def _slot_written_by(
    session: Session, *, tenant_id: uuid.UUID, write_id: uuid.UUID
) -> Memory | None:
    """The slot memory a keyed write with this derived ID already added a version to."""
    return session.exec(
        select(Memory)
        .join(MemoryVersion, col(MemoryVersion.memory_id) == col(Memory.id))
        .where(MemoryVersion.operation_id == write_id, Memory.tenant_id == tenant_id)
    ).first()


def append_version(
    session: Session, memory: Memory, text_: str, embedding: list[float] | None
) -> MemoryVersion:
    last = session.exec(
        select(func.max(MemoryVersion.seq)).where(MemoryVersion.memory_id == memory.id)
    ).one()
    version = MemoryVersion(
        tenant_id=memory.tenant_id, memory_id=memory.id, seq=(last or 0) + 1, text=text_,
        embedding=embedding,
    )
    session.add(version)
    session.flush()
    memory.current_version_id = version.id
    return version


def _apply(memory: Memory, body: MemoryCreate) -> None:
    """A restated slot takes the fields the new write names, and keeps the others."""
    given = body.model_fields_set
    if "volatility" in given:
        memory.volatility = body.volatility.value
    if "source" in given:
        memory.source = body.source
    if "depends_on" in given:
        memory.depends_on = dict(body.depends_on)
    if "metadata" in given:
        memory.meta = dict(body.metadata)


def _slot_holder(session: Session, *, tenant_id: uuid.UUID, body: MemoryCreate) -> uuid.UUID | None:
    """The live memory holding the write's slot; the caller locks it with the others.

    Two first writes to an empty slot would both find none; this advisory lock orders them
    (and every other write to the slot) until the transaction ends.
    """
    session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
        {"k": f"memory-slot:{tenant_id}:{body.subject}:{body.key}"},
    )
    assert body.key is not None
    return queries.slot_holder(session, tenant_id=tenant_id, subject=body.subject, key=body.key)


def _lock(
    session: Session, *, tenant_id: uuid.UUID, ids: list[uuid.UUID]
) -> dict[uuid.UUID, Memory]:
    """Lock these memories in id order; their rows as they are once locked."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = session.exec(
        select(Memory).where(Memory.tenant_id == tenant_id, col(Memory.id).in_(wanted))
        .order_by(col(Memory.id)).with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    return {memory.id: memory for memory in rows}


def _usable(rows: dict[uuid.UUID, Memory], wanted: list[uuid.UUID]) -> list[Memory]:
    """The `supersedes` targets, each live once locked."""
    missing = [str(i) for i in wanted if i not in rows or rows[i].state not in LIVE]
    if missing:
        raise InvalidReference(
            "supersedes names memories that do not exist or are not live: " + ", ".join(missing)
        )
    return [rows[i] for i in wanted]


def _check_derived_from(session: Session, *, tenant_id: uuid.UUID, ids: list[uuid.UUID]) -> None:
    wanted = set(ids)
    if not wanted:
        return
    found = set(session.exec(
        select(Memory.id).where(
            Memory.tenant_id == tenant_id, col(Memory.id).in_(wanted),
            Memory.state != MemoryState.forgotten.value,
        )
    ).all())
    missing = sorted(str(i) for i in wanted - found)
    if missing:
        raise InvalidReference("derived_from names unknown memories: " + ", ".join(missing))


def _record_provenance(
    session: Session, memory: Memory, *, source: str | None, derived_from: list[uuid.UUID]
) -> None:
    parents = ([("source", source)] if source else []) + [
        ("memory", str(parent)) for parent in dict.fromkeys(derived_from) if parent != memory.id
    ]
    for kind, ref in parents:
        session.add(ProvenanceEdge(tenant_id=memory.tenant_id, child_kind="memory",
                                   child_id=memory.id, parent_kind=kind, parent_ref=ref))
