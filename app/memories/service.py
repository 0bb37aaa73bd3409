"""Writing memories: remember, correct, revert. Services flush; the unit of work commits."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from app.audit import service as audit
from app.core.models import utcnow
from app.embeddings.runtime import embedder
from app.keys import digests
from app.limits import service as limits
from app.limits.errors import MemoryQuotaExceeded
from app.memories import contradictions, lifecycle, store
from app.memories.errors import (
    ExpiryInPast,
    IfMatchRequired,
    InvalidIfMatch,
    InvalidReference,
    MemoryExpired,
    NotEditable,
    NotWorking,
    RevisionMismatch,
)
from app.memories.lifecycle import CORRECTED, REVERTED, authored, new_revision, transition
from app.memories.models import LIVE_STATES, Memory, MemoryState, Volatility
from app.memories.schemas import Effects, MemoryCreate, MemoryPatch, MemoryWritten
from app.sources import service as sources

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
        tenant_id=tenant_id, subject=digests.subject_digest(tenant_id, body.subject), key=body.key,
        supersedes=body.supersedes,
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


def refuse_past_expiry(expires_at: datetime | None, now: datetime) -> None:
    """A write or correction may set an expiry in the future only (or none)."""
    if expires_at is not None and expires_at <= now:
        raise ExpiryInPast()


def _refuse_past_quota(session: Session, *, tenant_id: uuid.UUID) -> None:
    # Checked before anything changes; a new version of a slot adds no memory.
    quota = limits.memory_quota(session, tenant_id=tenant_id)
    if quota and store.count_held(session, tenant_id=tenant_id) >= quota:
        raise MemoryQuotaExceeded(quota)


def create(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    body: MemoryCreate,
    embedding: list[float],
    actor: str,
    memory_id: uuid.UUID | None = None,
    judged: contradictions.Judged | None = None,
    checked: bool = False,
    events: list[audit.Entry] | None = None,
) -> Written:
    """Remember: a new memory, or a new version of the live memory holding the same slot.

    Live memories of the subject that the new text contradicts become suspect (flag
    `contradicted`); ``judged`` holds a judge model's verdicts on borderline pairs, asked
    before the transaction opened (`contradictions.judge_borderline`). ``checked``: the
    caller (`bulk.write_item`) already refused an excluded source, in its own transaction, and
    found no earlier write with ``memory_id``. The write's audit event (`memory.created`, or
    `memory.corrected` for a slot's new version) is recorded last, after every row lock; a
    bulk write passes ``events`` to have it appended there instead and records its items'
    together (`lifecycle.record`).
    """
    if memory_id is not None and not checked:
        # Before the exclusion check: a redelivery of a write that already happened answers
        # as done even when a forget has since excluded its source (it stores nothing).
        done = already_written(session, tenant_id=tenant_id, memory_id=memory_id)
        if done is not None:
            return done
    now = utcnow()
    refuse_past_expiry(body.expires_at, now)
    if not checked:
        sources.refuse_if_excluded(session, tenant_id=tenant_id, source=body.source,
                                   actor=actor, action="memory.create")
    # From here on the subject and the source are their digests, as stored; the strings
    # survive only in the memory's sealed copies of them.
    given, body = body, stored(tenant_id, body)
    _check_derived_from(session, tenant_id=tenant_id, ids=body.derived_from)
    wanted = list(dict.fromkeys(body.supersedes))
    slot_id = None
    if body.key is not None:
        # Two first writes to an empty slot would both find no holder: the slot lock orders
        # them (and every other write to the slot) until the transaction ends.
        store.lock_slot(session, tenant_id=tenant_id, subject=body.subject, key=body.key)
        slot_id = store.slot_holder(session, tenant_id=tenant_id, subject=body.subject,
                                    key=body.key)
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
    rows = store.lock(session, tenant_id=tenant_id,
                      ids=[*wanted, *([slot_id] if slot_id else []), *(c.id for c in nearby)])
    targets = _usable(rows, wanted)
    slot = rows.get(slot_id) if slot_id is not None else None
    if slot is not None and slot.state in LIVE and store.expired(slot, now):
        # An expired holder behaves as deprecated: recorded so now, and the slot is free.
        lifecycle.expire(session, slot, actor=actor)
    if slot is not None and (slot.state not in LIVE or slot.id in {t.id for t in targets}):
        slot = None  # gone meanwhile, or explicitly defeated: the new memory takes the slot
    if body.expected_revision is not None and (
        slot is None or slot.revision != body.expected_revision
    ):
        raise RevisionMismatch(slot.revision if slot else None)
    memory = slot
    if memory is None:
        _refuse_past_quota(session, tenant_id=tenant_id)
    if memory is not None:
        # The write's derived ID marks the version, so a redelivery after the operation
        # record expired finds it (`store.written_by`) instead of adding another.
        version = store.append_version(session, memory, body.text, embedding,
                                       operation_id=memory_id)
        store.restate(memory, body, source=given.source)
        new_revision(session, memory, flush=False)
    written_id = memory.id if memory is not None else memory_id or uuid.uuid4()
    superseded: list[uuid.UUID] = []
    for target in targets:
        if target.id != written_id:
            transition(session, target, MemoryState.deprecated, reason="superseded",
                       actor=actor, superseded_by=written_id)
            superseded.append(target.id)
    if memory is None:
        # After the supersessions: a defeated slot holder has left the slot the new memory
        # takes (one live memory per slot).
        memory = store.insert(session, memory_id=written_id, tenant_id=tenant_id, body=body,
                              subject=given.subject, source=given.source)
        version = store.append_version(session, memory, body.text, embedding, first=True)
    store.record_provenance(session, tenant_id=tenant_id, child_id=memory.id,
                            source=body.source, derived_from=body.derived_from)
    suspected = contradictions.flag(
        session, memory_id=memory.id, new_text=body.text, found=nearby, rows=rows,
        limits=limits, judged=judged or {}, actor=actor,
    )
    event = lifecycle.written(memory, version, actor=actor, new=slot is None)
    if events is None:
        lifecycle.record(session, tenant_id=tenant_id, entries=[event])
    else:
        events.append(event)
    session.flush()
    effects = Effects(superseded=superseded, suspected=suspected)
    return Written(
        MemoryWritten(**store.view(session, memory).model_dump(), effects=effects),
        created=slot is None,
    )


def stored(tenant_id: uuid.UUID, body: MemoryCreate) -> MemoryCreate:
    """A write as stored: its subject and source replaced by their keyed digests (the one
    place a write's subject enters SQL)."""
    digested = body.model_copy(update={
        "subject": digests.subject_digest(tenant_id, body.subject),
        "source": digests.optional_source(tenant_id, body.source)})
    # What the write named stays what it named (a restated slot keeps an unnamed source).
    object.__setattr__(digested, "__pydantic_fields_set__", set(body.model_fields_set))
    return digested


def already_written(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID
) -> Written | None:
    """What a keyed write with this derived ID already did (a redelivery after its operation
    record expired: it happened), or None. A memory forgotten since answers as done."""
    existing = (store.find(session, tenant_id=tenant_id, memory_id=memory_id)
                or store.written_by(session, tenant_id=tenant_id, write_id=memory_id))
    if existing is None:
        return None
    if existing.state == MemoryState.forgotten:
        return Written(None, created=True, forgotten_id=existing.id)
    return Written(MemoryWritten(**store.view(session, existing).model_dump(),
                                 effects=Effects()), created=True)


def update(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    memory_id: uuid.UUID,
    if_match: str | None,
    patch: MemoryPatch,
    embedding: list[float] | None,
    actor: str,
) -> MemoryWritten:
    """Correct: compare-and-set on the revision; a new text appends a version. Audited as
    `memory.corrected`, naming the version current after it and the fields it changed."""
    memory = _lock_for_edit(session, tenant_id=tenant_id, memory_id=memory_id, if_match=if_match)
    now = utcnow()
    if "expires_at" in patch.model_fields_set:
        refuse_past_expiry(patch.expires_at, now)
    elif store.expired(memory, now) and memory.state in LIVE:
        raise MemoryExpired(memory.id)  # a correction that leaves the expiry does not revive
    if patch.changes_nothing():
        # No change, no new revision: the revision counts changes, not requests.
        return MemoryWritten(**store.view(session, memory).model_dump(), effects=Effects())
    version = (store.append_version(session, memory, patch.text, embedding)
               if patch.text is not None else store.current_version(session, memory))
    store.patch(memory, patch)
    fields = patch.changed()
    expiry = ({"expires_at": patch.expires_at.isoformat() if patch.expires_at else None}
              if "expires_at" in fields else {})
    return _revised(session, memory, authored(CORRECTED, version, actor=actor, via="patch",
                                              fields=fields, **expiry))


def revert(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, if_match: str | None,
    seq: int, actor: str,
) -> MemoryWritten:
    """Point at an earlier version again; the revision still moves forward (no ABA). Audited
    as `memory.reverted`, naming the version."""
    memory = _lock_for_edit(session, tenant_id=tenant_id, memory_id=memory_id, if_match=if_match)
    _refuse_expired(memory)
    version = store.version_at(session, memory, seq)
    if version is None:
        raise InvalidReference(f"This memory has no version {seq}.")
    store.make_current(memory, version)
    return _revised(session, memory, authored(REVERTED, version, actor=actor))


def promote(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, if_match: str | None,
    volatility: Volatility,
) -> MemoryWritten:
    """Make a working memory durable, so closing its session keeps it; If-Match optional.

    Promoting it again to the class it already has changes nothing (a retry of a promote
    without an Idempotency-Key finds it done)."""
    memory = store.load(session, tenant_id=tenant_id, memory_id=memory_id, for_update=True)
    if if_match is not None and memory.revision != expected_revision(if_match):
        raise RevisionMismatch(memory.revision)
    if memory.volatility == volatility.value:
        return MemoryWritten(**store.view(session, memory).model_dump(), effects=Effects())
    if memory.volatility != Volatility.working.value:
        raise NotWorking(f"This memory is {memory.volatility}, not working.")
    if memory.state == MemoryState.quarantined:
        raise NotEditable("A quarantined memory is kept for audit; it cannot be edited.")
    _refuse_expired(memory)
    store.promote(memory, volatility.value)
    return _revised(session, memory)


def _revised(
    session: Session, memory: Memory, event: lifecycle.Event | None = None
) -> MemoryWritten:
    new_revision(session, memory, event=event)
    return MemoryWritten(**store.view(session, memory).model_dump(), effects=Effects())


def _lock_for_edit(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, if_match: str | None
) -> Memory:
    # A missing memory is 404 before any precondition is judged; the row lock makes the
    # revision comparison exact under concurrent edits.
    memory = store.load(session, tenant_id=tenant_id, memory_id=memory_id, for_update=True)
    # One that reads as erased (a restored copy's, its key destroyed) is absent here too: an
    # edit would give it new content under the subject's next key.
    store.view(session, memory)
    if memory.revision != expected_revision(if_match):
        raise RevisionMismatch(memory.revision)
    if memory.state == MemoryState.quarantined:
        raise NotEditable("A quarantined memory is kept for audit; it cannot be edited.")
    return memory


def _refuse_expired(memory: Memory) -> None:
    """A revert or promote of a live memory past its expiry would revive it: refused (409);
    a correction that moves or clears `expires_at` is the way back."""
    if memory.state in LIVE and store.expired(memory, utcnow()):
        raise MemoryExpired(memory.id)


def _usable(rows: dict[uuid.UUID, Memory], wanted: list[uuid.UUID]) -> list[Memory]:
    """The `supersedes` targets, each live once locked."""
    missing = [str(i) for i in wanted if i not in rows or rows[i].state not in LIVE]
    if missing:
        raise InvalidReference(
            "supersedes names memories that do not exist or are not live: " + ", ".join(missing)
        )
    return [rows[i] for i in wanted]


def _check_derived_from(session: Session, *, tenant_id: uuid.UUID, ids: list[uuid.UUID]) -> None:
    found = store.unforgotten(session, tenant_id=tenant_id, ids=ids)
    missing = sorted(str(i) for i in set(ids) - found)
    if missing:
        raise InvalidReference("derived_from names unknown memories: " + ", ".join(missing))
