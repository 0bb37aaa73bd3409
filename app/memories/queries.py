"""Reading memories, the read-only half of the memory store (`store.py`): pages, versions and
lineage for the API, and the reads of services that judge memories by their texts (nearest
live memories, near-duplicate pairs, current texts). Every public Memory shape is built by
`store.views`; every lock and write is the store's.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from sqlalchemy import Text, and_, func, or_, tuple_
from sqlalchemy import cast as sa_cast
from sqlalchemy import select as sa_select
from sqlalchemy import text as sql
from sqlmodel import Session, col, select

from app.audit import service as audit
from app.core import db
from app.core.models import utcnow
from app.keys import digests
from app.memories import replay, sealing, store
from app.memories.errors import InvalidCursor, MemoryNotFound
from app.memories.models import (
    LIVE_STATES,
    Memory,
    MemoryState,
    MemoryVersion,
    ProvenanceEdge,
)
from app.memories.schemas import (
    EdgePublic,
    Lineage,
    MemoryPage,
    MemoryPublic,
    Tombstone,
    VersionList,
    VersionPublic,
)

LIVE = [state.value for state in LIVE_STATES]


@dataclass(frozen=True)
class Filters:
    subject: str | None = None
    state: MemoryState | None = None
    key: str | None = None
    source: str | None = None


def get(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> MemoryPublic:
    return store.view(session, store.load(session, tenant_id=tenant_id, memory_id=memory_id))


def encode_cursor(memory: Memory) -> str:
    raw = json.dumps([memory.created_at.isoformat(), str(memory.id)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, memory_id = json.loads(raw)
        when = datetime.fromisoformat(created_at)
        if when.tzinfo is None:
            raise ValueError("naive time")
        return when, uuid.UUID(memory_id)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise InvalidCursor("Pass back a `next_cursor` exactly as it was given.") from None


def page(
    session: Session, *, tenant_id: uuid.UUID, filters: Filters, limit: int,
    cursor: str | None = None,
) -> MemoryPage:
    """Memories oldest first by (created_at, id); forgotten ones never appear."""
    statement = select(Memory).where(
        Memory.tenant_id == tenant_id, Memory.state != MemoryState.forgotten.value,
        store.shown_live(utcnow()),
    )
    # The one place a listing's subject and source enter SQL: as the digests stored.
    if filters.subject is not None:
        statement = statement.where(
            Memory.subject == digests.subject_digest(tenant_id, filters.subject))
    if filters.state is not None:
        statement = statement.where(Memory.state == filters.state.value)
    if filters.key is not None:
        statement = statement.where(Memory.key == filters.key)
    if filters.source is not None:
        statement = statement.where(
            Memory.source == digests.source_digest(tenant_id, filters.source))
    if cursor is not None:
        after_at, after_id = decode_cursor(cursor)
        statement = statement.where(
            or_(
                col(Memory.created_at) > after_at,
                and_(col(Memory.created_at) == after_at, col(Memory.id) > after_id),
            )
        )
    statement = statement.order_by(
        tuple_(col(Memory.created_at), col(Memory.id))
    ).limit(limit + 1)
    rows = list(session.exec(statement))
    more = len(rows) > limit
    rows = rows[:limit]
    return MemoryPage(
        data=store.views(session, tenant_id=tenant_id, ids=[memory.id for memory in rows]),
        next_cursor=encode_cursor(rows[-1]) if more else None,
    )


def version_rows(session: Session, memory: Memory) -> list[VersionPublic]:
    """The memory's versions, opened; `MemoryNotFound` when it reads as erased (its current
    text under a key an erasure destroyed, as `store.public` decides)."""
    statement = select(MemoryVersion).where(
        MemoryVersion.memory_id == memory.id
    ).order_by(col(MemoryVersion.seq))
    opener = sealing.Opener()
    found = list(session.exec(statement))
    if any(v.id == memory.current_version_id
           and opener.erased(memory.tenant_id, memory.subject, v.sealed_text) for v in found):
        raise MemoryNotFound()
    return [
        VersionPublic(id=v.id, seq=v.seq, created_at=v.created_at,
                      text=opener.text(memory.tenant_id, memory.subject, v.id, v.sealed_text),
                      current=v.id == memory.current_version_id)
        for v in found
    ]


def versions(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> VersionList:
    memory = store.load(session, tenant_id=tenant_id, memory_id=memory_id)
    return VersionList(data=version_rows(session, memory))


def lineage(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> Lineage:
    memory = store.load(session, tenant_id=tenant_id, memory_id=memory_id)
    supersedes = session.exec(
        select(Memory.id).where(Memory.tenant_id == tenant_id, Memory.superseded_by == memory.id)
        .order_by(col(Memory.created_at))
    ).all()
    parents = session.exec(
        select(ProvenanceEdge).where(
            ProvenanceEdge.tenant_id == tenant_id, ProvenanceEdge.child_id == memory.id
        ).order_by(col(ProvenanceEdge.created_at))
    ).all()
    children = session.exec(
        select(ProvenanceEdge).where(
            ProvenanceEdge.tenant_id == tenant_id,
            ProvenanceEdge.parent_kind == "memory",
            ProvenanceEdge.parent_ref == str(memory.id),
        ).order_by(col(ProvenanceEdge.created_at))
    ).all()
    trail = audit.trail(session, tenant_id=tenant_id, target_kind="memory", target_id=memory.id)
    contradicted_by = next((event.details["contradicted_by"] for event in reversed(trail)
                            if "contradicted_by" in event.details), None)
    return Lineage(
        id=memory.id,
        state=MemoryState(memory.state),
        versions=version_rows(session, memory),
        superseded_by=memory.superseded_by,
        supersedes=list(supersedes),
        contradicted_by=contradicted_by,
        audit_events=trail,
        parents=[EdgePublic(kind=e.parent_kind, ref=_shown_ref(memory, e), created_at=e.created_at)
                 for e in parents],
        children=[EdgePublic(kind=e.child_kind, ref=str(e.child_id), created_at=e.created_at)
                  for e in children],
    )


def _shown_ref(memory: Memory, edge: ProvenanceEdge) -> str:
    """A parent as shown: a source edge names the source's digest, shown as the string when
    it is the memory's own source (the one kept sealed)."""
    if edge.parent_kind == "source" and edge.parent_ref == memory.source:
        return source_of(memory) or edge.parent_ref
    return edge.parent_ref


def version_authors(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID
) -> dict[uuid.UUID, str]:
    """Who wrote each version of a memory: the actor of the first audit event naming it
    (`memory.created`, `memory.corrected` or `memory.struck`). Versions written before
    content was audited have none."""
    found = audit.first_actors(session, tenant_id=tenant_id, target_kind="memory",
                               target_id=memory_id, detail="version_id")
    return {uuid.UUID(version_id): actor for version_id, actor in found.items()}


def tombstone(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> Tombstone | None:
    """What stays of a forgotten memory: its ID, when and why (from its audit trail), never
    content; None when the memory is not forgotten (or not this tenant's)."""
    memory = store.find(session, tenant_id=tenant_id, memory_id=memory_id)
    if memory is None or memory.state != MemoryState.forgotten.value:
        return None
    trail = audit.trail(session, tenant_id=tenant_id, target_kind="memory", target_id=memory.id)
    forgot = next((event for event in reversed(trail)
                   if event.to_state == MemoryState.forgotten.value), None)
    return Tombstone(
        id=memory.id,
        forgotten_at=forgot.created_at if forgot is not None else memory.state_changed_at,
        reason=forgot.reason if forgot is not None else None,
        actor=forgot.actor if forgot is not None else None,
        audit_events=trail,
    )


def count_held(
    session: Session, *, tenant_id: uuid.UUID, hold_id: uuid.UUID, subject: str | None,
    source: str | None,
) -> int:
    """How many memories (forgotten ones aside) legal hold ``hold_id`` covers now; 0 once it
    is released. ``subject`` and ``source`` are the hold's own: they pick the indexes that
    find its candidates, and the one rule (`store.holding`) decides each."""
    candidates = ["SELECT memory_id FROM legal_hold_memory WHERE hold_id = :hold_id"]
    if subject is not None:
        candidates.append(
            "SELECT id FROM memory WHERE tenant_id = :tenant_id AND subject = :subject")
    if source is not None:
        candidates += [
            "SELECT child_id FROM provenance_edge WHERE tenant_id = :tenant_id"
            " AND parent_kind = 'source' AND parent_ref = :source AND child_kind = 'memory'",
            "SELECT id FROM memory WHERE tenant_id = :tenant_id AND source = :source",
        ]
    statement = sql(
        "WITH candidate AS MATERIALIZED (SELECT id, tenant_id, subject, source FROM memory"
        " WHERE tenant_id = :tenant_id AND state <> 'forgotten'"
        f" AND id IN ({' UNION '.join(candidates)}))"
        f" SELECT count(DISTINCT memory_id) FROM ({store.holding('candidate m')}) covered"
        " WHERE hold_id = :hold_id")
    session.flush()
    count: int = session.execute(statement, {
        "tenant_id": tenant_id, "hold_id": hold_id, "subject": subject, "source": source,
    }).scalar_one()
    return count


# ---------------------------------------------------------------------------------------------
# Reads for the services that judge memories by their texts (contradictions, consolidation,
# forget by description).
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OpenedVersion:
    """A version with its text opened."""

    id: uuid.UUID
    memory_id: uuid.UUID
    seq: int
    text: str
    created_at: datetime


def _opened(rows: Any) -> list[OpenedVersion]:
    """Rows of (tenant_id, subject, version) as opened versions."""
    opener = sealing.Opener()
    return [OpenedVersion(id=v.id, memory_id=v.memory_id, seq=v.seq, created_at=v.created_at,
                          text=opener.text(tenant_id, subject, v.id, v.sealed_text))
            for tenant_id, subject, v in rows]


def _with_subjects() -> Any:
    return (select(Memory.tenant_id, Memory.subject, MemoryVersion)
            .join(Memory, col(Memory.id) == col(MemoryVersion.memory_id)))


def versions_of(session: Session, memory_ids: Sequence[uuid.UUID]) -> list[OpenedVersion]:
    return _opened(session.exec(
        _with_subjects().where(col(MemoryVersion.memory_id).in_(list(memory_ids)))))


def version_texts(session: Session, version_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not version_ids:
        return {}
    return {version.id: version.text for version in _opened(session.exec(
        _with_subjects().where(col(MemoryVersion.id).in_(list(version_ids)))))}


def with_current_texts(
    session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID], states: Sequence[str]
) -> dict[uuid.UUID, tuple[Memory, str]]:
    """Those of ``ids`` in one of ``states``, each with its current text."""
    opener = sealing.Opener()
    return {
        memory.id: (memory, opener.text(memory.tenant_id, memory.subject, version.id,
                                        version.sealed_text))
        for memory, version in session.exec(
            select(Memory, MemoryVersion)
            .join(MemoryVersion, col(MemoryVersion.id) == col(Memory.current_version_id))
            .where(Memory.tenant_id == tenant_id, col(Memory.id).in_(list(ids)),
                   col(Memory.state).in_(list(states)))
        )
    }


@dataclass(frozen=True)
class Stated:
    """A live memory's current text, without its vector."""

    id: uuid.UUID
    version_id: uuid.UUID
    key: str | None
    text: str
    at: datetime  # when its current text was stated


def stated(session: Session, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Stated]:
    """The live memories of ``ids`` with their current texts."""
    rows = session.execute(
        sa_select(col(Memory.id), col(Memory.key), col(MemoryVersion.id),
                  col(MemoryVersion.sealed_text), col(MemoryVersion.created_at),
                  col(Memory.tenant_id), col(Memory.subject))
        .join(MemoryVersion, col(MemoryVersion.id) == col(Memory.current_version_id))
        .where(col(Memory.id).in_(list(ids)), col(Memory.state).in_(LIVE))
    ).all()
    opener = sealing.Opener()
    return {row[0]: Stated(row[0], row[2], row[1], opener.text(row[5], row[6], row[2], row[3]),
                           row[4])
            for row in rows}


# Exact, as forgetting's list in app/recall/candidates.py: the subject's rows are gathered in
# a materialized CTE (which the planner cannot feed from the HNSW index), then sorted, so a
# correction always meets the facts it contradicts, however many the subject has.
_NEAREST = sql(
    """
    WITH subject_rows AS MATERIALIZED (
        SELECT m.id, v.id AS version_id, v.embedding <=> CAST(:embedding AS vector) AS distance
        FROM memory_version v
        JOIN memory m ON m.current_version_id = v.id
        WHERE m.tenant_id = :tenant_id AND m.subject = :subject AND m.state = ANY(:states)
          AND v.embedding IS NOT NULL AND m.id <> ALL(CAST(:excluded AS uuid[]))
          AND (m.expires_at IS NULL OR m.expires_at > :now)
    )
    SELECT id, version_id, 1 - distance FROM subject_rows
    WHERE distance <= :max_distance
    ORDER BY distance, id
    LIMIT :k
    """
)


def nearest_live(
    session: Session, *, tenant_id: uuid.UUID, subject: str, embedding: Sequence[float],
    exclude: Sequence[uuid.UUID], max_distance: float, k: int,
) -> list[tuple[uuid.UUID, uuid.UUID, float]]:
    """The ``k`` live, unexpired memories of ``subject`` nearest to ``embedding`` (cosine
    distance at most
    ``max_distance``), as (memory id, current version id, cosine similarity)."""
    rows = session.execute(_NEAREST, {
        "embedding": store.vector_literal(embedding), "tenant_id": tenant_id,
        "subject": subject, "states": LIVE, "excluded": [str(i) for i in exclude], "k": k,
        "max_distance": max_distance, "now": utcnow(),
    }).all()
    return [(row[0], row[1], float(row[2])) for row in rows]


_CROWDED_SUBJECTS = sql(
    """
    SELECT subject FROM memory
    WHERE tenant_id = :tenant_id AND state = ANY(:states)
    GROUP BY subject HAVING count(*) > 1
    ORDER BY subject
    """
)
# The subject's live current versions, read once; every pair compared in the database.
_NEAR_PAIRS = sql(
    """
    WITH live AS MATERIALIZED (
        SELECT m.id, v.id AS version_id, v.embedding
        FROM memory m JOIN memory_version v ON v.id = m.current_version_id
        WHERE m.tenant_id = :tenant_id AND m.subject = :subject AND m.state = ANY(:states)
          AND v.embedding IS NOT NULL
    )
    SELECT a.id, a.version_id, b.id, b.version_id, 1 - (a.embedding <=> b.embedding)
    FROM live a JOIN live b ON a.id < b.id
    WHERE (a.embedding <=> b.embedding) <= :max_distance
    """
)


def crowded_subjects(session: Session, *, tenant_id: uuid.UUID) -> list[str]:
    """The tenant's subjects with two live memories or more."""
    return list(session.execute(_CROWDED_SUBJECTS, {"tenant_id": tenant_id, "states": LIVE})
                .scalars().all())


def near_pairs(
    session: Session, *, tenant_id: uuid.UUID, subject: str, max_distance: float
) -> list[tuple[uuid.UUID, uuid.UUID, uuid.UUID, uuid.UUID, float]]:
    """Pairs of ``subject``'s live memories whose current versions lie within
    ``max_distance`` (cosine): (a, a's version, b, b's version, similarity), a < b."""
    rows = session.execute(_NEAR_PAIRS, {
        "tenant_id": tenant_id, "subject": subject, "states": LIVE, "max_distance": max_distance,
    }).all()
    return [(row[0], row[1], row[2], row[3], float(row[4])) for row in rows]


# ---------------------------------------------------------------------------------------------
# Reads for an access export (app/access/): one subject's memories in every state.
# ---------------------------------------------------------------------------------------------

def _subject_ids(tenant_id: uuid.UUID, subject: str) -> Any:
    return select(Memory.id).where(Memory.tenant_id == tenant_id, Memory.subject == subject)


def of_subject(session: Session, *, tenant_id: uuid.UUID, subject: str) -> list[Memory]:
    """The subject's memories in every state, tombstones included, oldest first."""
    return list(session.exec(
        select(Memory).where(Memory.tenant_id == tenant_id, Memory.subject == subject)
        .order_by(col(Memory.created_at), col(Memory.id))
    ))


def versions_of_subject(
    session: Session, *, tenant_id: uuid.UUID, subject: str
) -> list[OpenedVersion]:
    """Every version of the subject's memories that are not forgotten (a tombstone's are
    empty), by memory and seq."""
    return _opened(session.exec(
        _with_subjects()
        .where(Memory.tenant_id == tenant_id, Memory.subject == subject,
               Memory.state != MemoryState.forgotten.value)
        .order_by(col(MemoryVersion.memory_id), col(MemoryVersion.seq))
    ))


def metadata_of(memory: Memory) -> dict[str, Any]:
    """A memory's metadata, opened."""
    return sealing.open_metadata(memory.tenant_id, memory.subject, memory.id,
                                 memory.sealed_metadata)


def source_of(memory: Memory, opener: sealing.Opener | None = None) -> str | None:
    """A memory's source as shown (stored: its digest; shown: its sealed copy, opened)."""
    return (opener or sealing.Opener()).source(memory.tenant_id, memory.subject, memory.id,
                                               memory.source, memory.sealed_source)


def subject_of(memory: Memory, opener: sealing.Opener | None = None) -> str:
    """A memory's subject as shown (stored: its digest; shown: its sealed copy, opened)."""
    return (opener or sealing.Opener()).subject(memory.tenant_id, memory.subject, memory.id,
                                                memory.sealed_subject)


def edges_of_subject(
    session: Session, *, tenant_id: uuid.UUID, subject: str
) -> list[ProvenanceEdge]:
    """The provenance edges into and out of the subject's memories, oldest first."""
    ids = _subject_ids(tenant_id, subject)
    return list(session.exec(
        select(ProvenanceEdge).where(
            ProvenanceEdge.tenant_id == tenant_id,
            or_(col(ProvenanceEdge.child_id).in_(ids),
                and_(col(ProvenanceEdge.parent_kind) == "memory",
                     col(ProvenanceEdge.parent_ref).in_(
                         select(sa_cast(Memory.id, Text)).where(
                             Memory.tenant_id == tenant_id, Memory.subject == subject)))),
        ).order_by(col(ProvenanceEdge.created_at), col(ProvenanceEdge.id))
    ))


def counts_by_state(session: Session, *, tenant_id: uuid.UUID) -> dict[MemoryState, int]:
    """How many of the tenant's memories are in each state (every state named, zeros too)."""
    rows = session.exec(
        select(Memory.state, func.count()).where(Memory.tenant_id == tenant_id)
        .group_by(Memory.state)
    ).all()
    found = {MemoryState(state): count for state, count in rows}
    return {state: found.get(state, 0) for state in MemoryState}


# ---------------------------------------------------------------------------------------------
# As of an instant (`?as_of=`, recall's `as_of`): memories replayed from their audit trails.
# ---------------------------------------------------------------------------------------------

# The memories that existed at the instant and are not forgotten now (whatever was forgotten
# never comes back, whenever it was forgotten), one subject's or some IDs'.
_THEN_MEMORIES = """
    SELECT m.id, m.tenant_id, m.subject, m.volatility, m.key, m.source, m.depends_on,
           m.sealed_metadata, m.created_at, m.last_validated_at, m.observed_at, m.session,
           m.sealed_subject, m.sealed_source
    FROM memory m
    WHERE m.tenant_id = %(tenant_id)s AND m.state <> 'forgotten' AND m.created_at <= %(at)s
      AND {which}
"""
# Their trails up to the instant, in the chain's order.
_THEN_EVENTS = """
    SELECT target_id, action, to_state, details, created_at FROM audit_event
    WHERE tenant_id = %(tenant_id)s AND target_kind = 'memory'
      AND target_id = ANY(%(targets)s) AND created_at <= %(at)s
    ORDER BY seq
"""
# A memory whose trail names no version (written before versions were named): its newest
# version by then.
_THEN_LATEST_VERSIONS = """
    SELECT DISTINCT ON (memory_id) memory_id, id FROM memory_version
    WHERE memory_id = ANY(%(ids)s) AND created_at <= %(at)s
    ORDER BY memory_id, seq DESC
"""
_THEN_VERSIONS = """
    SELECT id, seq, sealed_text FROM memory_version WHERE id = ANY(%(ids)s)
"""


@dataclass(frozen=True)
class MemoryThen:
    """A memory at an instant: its row (what no event records, as it is now) and its
    replayed state, flags, version, expiry and revision."""

    row: dict[str, Any]
    then: replay.Then

    @property
    def id(self) -> uuid.UUID:
        memory_id: uuid.UUID = self.row["id"]
        return memory_id


def memories_then(
    conn: psycopg.Connection[Any], *, tenant_id: uuid.UUID, at: datetime,
    subject: str | None = None, ids: Sequence[uuid.UUID] | None = None,
) -> list[MemoryThen]:
    """The memories of ``subject`` (or with these ``ids``) as they stood at ``at``: those
    written by then and not forgotten since, each replayed from its trail up to ``at``."""
    which = "m.subject = %(subject)s" if subject is not None else "m.id = ANY(%(ids)s)"
    params = {"tenant_id": tenant_id, "at": at, "subject": subject, "ids": list(ids or [])}
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(_THEN_MEMORIES.format(which=which), params).fetchall()
        if not rows:
            return []
        events: dict[str, list[replay.Event]] = {}
        for event in cursor.execute(_THEN_EVENTS, {**params, "targets": [
                str(row["id"]) for row in rows]}).fetchall():
            events.setdefault(event["target_id"], []).append(replay.Event(
                action=event["action"], to_state=event["to_state"], details=event["details"],
                created_at=event["created_at"]))
        found = [MemoryThen(row=row, then=replay.replay(events.get(str(row["id"]), [])))
                 for row in rows]
        unnamed = [memory.id for memory in found if memory.then.version_id is None]
        if unnamed:
            latest = {r["memory_id"]: r["id"] for r in cursor.execute(
                _THEN_LATEST_VERSIONS, {"ids": unnamed, "at": at}).fetchall()}
            for memory in found:
                if memory.then.version_id is None:
                    memory.then.version_id = latest.get(memory.id)
    return [memory for memory in found if memory.then.version_id is not None]


def views_then(conn: psycopg.Connection[Any], memories: Sequence[MemoryThen],
               at: datetime) -> list[MemoryPublic]:
    """The public shape of these memories as they stood at ``at``, in the order given: the
    version current then (its text as stored now: a strike that redacted it stays redacted),
    the state, flags, revision and expiry then. A memory that reads as erased is left out."""
    if not memories:
        return []
    with conn.cursor(row_factory=dict_row) as cursor:
        versions = {row["id"]: row for row in cursor.execute(_THEN_VERSIONS, {
            "ids": [memory.then.version_id for memory in memories]}).fetchall()}
    opener = sealing.Opener()
    shown = []
    for memory in memories:
        version, then, row = versions[memory.then.version_id], memory.then, memory.row
        validated = row["last_validated_at"]
        if validated > at:
            validated = then.validated_at or row["created_at"]
        view = store.public({
            **row, "sealed_text": version["sealed_text"], "revision": then.revision,
            "version_id": version["id"], "version_seq": version["seq"], "state": then.state,
            "superseded_by": then.superseded_by, "flags": then.flags,
            "updated_at": then.updated_at or row["created_at"], "last_validated_at": validated,
            "expires_at": then.expires_at}, opener)
        if view is not None:  # None: erased, in a copy restored from before the erasure
            shown.append(view)
    return shown


def get_then(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID,
             at: datetime) -> MemoryPublic:
    """`GET /v1/memories/{id}?as_of=`: 404 when it did not exist yet, or is forgotten now."""
    conn = db.driver_connection(session)
    found = memories_then(conn, tenant_id=tenant_id, at=at, ids=[memory_id])
    if not found:
        raise MemoryNotFound()
    shown = views_then(conn, found, at)
    if not shown:
        raise MemoryNotFound()
    return shown[0]
