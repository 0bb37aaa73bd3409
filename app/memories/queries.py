"""Reading memories: one memory, pages of them, versions, lineage; and their public shape."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, tuple_
from sqlmodel import Session, col, select

from app.audit import service as audit
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
    VersionList,
    VersionPublic,
    VersionRef,
)


@dataclass(frozen=True)
class Filters:
    subject: str | None = None
    state: MemoryState | None = None
    key: str | None = None
    source: str | None = None


def load(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, for_update: bool = False
) -> Memory:
    """A visible memory (forgotten reads as absent), optionally locked for an edit."""
    statement = select(Memory).where(Memory.id == memory_id, Memory.tenant_id == tenant_id)
    if for_update:
        statement = statement.with_for_update()
    memory = session.exec(statement).first()
    if memory is None or memory.state == MemoryState.forgotten:
        raise MemoryNotFound()
    return memory


def public(memory: Memory, version: MemoryVersion) -> MemoryPublic:
    return MemoryPublic(
        id=memory.id,
        subject=memory.subject,
        text=version.text,
        revision=memory.revision,
        version=VersionRef(id=version.id, seq=version.seq),
        state=MemoryState(memory.state),
        volatility=memory.volatility,
        key=memory.key,
        source=memory.source,
        depends_on=dict(memory.depends_on),
        metadata=dict(memory.meta),
        superseded_by=memory.superseded_by,
        flags=list(memory.flags),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        last_validated_at=memory.last_validated_at,
    )


def slot_holder(
    session: Session, *, tenant_id: uuid.UUID, subject: str, key: str
) -> uuid.UUID | None:
    """The live memory holding ``subject``'s slot ``key``, if any (one at most)."""
    return session.exec(
        select(Memory.id).where(
            Memory.tenant_id == tenant_id, Memory.subject == subject, Memory.key == key,
            col(Memory.state).in_([state.value for state in LIVE_STATES]),
        )
    ).first()


# What `public_from_row` needs, for statements over `memory m JOIN memory_version v` that
# skip the ORM (recall's hot path); `updated_at` is the memory's.
PUBLIC_COLUMNS = (
    "m.id, m.subject, v.text, m.revision, v.id AS version_id, v.seq AS version_seq, m.state, "
    "m.volatility, m.key, m.source, m.depends_on, m.metadata, m.superseded_by, m.flags, "
    "m.created_at, m.updated_at, m.last_validated_at"
)


def public_from_row(row: Mapping[Any, Any]) -> MemoryPublic:
    return MemoryPublic(
        id=row["id"], subject=row["subject"], text=row["text"], revision=row["revision"],
        version=VersionRef(id=row["version_id"], seq=row["version_seq"]),
        state=MemoryState(row["state"]), volatility=row["volatility"], key=row["key"],
        source=row["source"], depends_on=row["depends_on"], metadata=row["metadata"],
        superseded_by=row["superseded_by"], flags=row["flags"], created_at=row["created_at"],
        updated_at=row["updated_at"], last_validated_at=row["last_validated_at"],
    )


def current_version(session: Session, memory: Memory) -> MemoryVersion:
    version = session.get(MemoryVersion, memory.current_version_id)
    assert version is not None, "a visible memory always has a current version"
    return version


def view(session: Session, memory: Memory) -> MemoryPublic:
    return public(memory, current_version(session, memory))


def get(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> MemoryPublic:
    return view(session, load(session, tenant_id=tenant_id, memory_id=memory_id))


def views(session: Session, memories: Sequence[Memory]) -> list[MemoryPublic]:
    ids = [m.current_version_id for m in memories if m.current_version_id is not None]
    versions = {
        v.id: v for v in session.exec(select(MemoryVersion).where(col(MemoryVersion.id).in_(ids)))
    } if ids else {}
    return [public(m, versions[m.current_version_id]) for m in memories
            if m.current_version_id in versions]


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
        Memory.tenant_id == tenant_id, Memory.state != MemoryState.forgotten.value
    )
    if filters.subject is not None:
        statement = statement.where(Memory.subject == filters.subject)
    if filters.state is not None:
        statement = statement.where(Memory.state == filters.state.value)
    if filters.key is not None:
        statement = statement.where(Memory.key == filters.key)
    if filters.source is not None:
        statement = statement.where(Memory.source == filters.source)
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
        data=views(session, rows), next_cursor=encode_cursor(rows[-1]) if more else None
    )


def version_rows(session: Session, memory: Memory) -> list[VersionPublic]:
    statement = select(MemoryVersion).where(
        MemoryVersion.memory_id == memory.id
    ).order_by(col(MemoryVersion.seq))
    return [
        VersionPublic(id=v.id, seq=v.seq, text=v.text, created_at=v.created_at,
                      current=v.id == memory.current_version_id)
        for v in session.exec(statement)
    ]


def versions(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> VersionList:
    memory = load(session, tenant_id=tenant_id, memory_id=memory_id)
    return VersionList(data=version_rows(session, memory))


def lineage(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> Lineage:
    memory = load(session, tenant_id=tenant_id, memory_id=memory_id)
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
        parents=[EdgePublic(kind=e.parent_kind, ref=e.parent_ref, created_at=e.created_at)
                 for e in parents],
        children=[EdgePublic(kind=e.child_kind, ref=str(e.child_id), created_at=e.created_at)
                  for e in children],
    )
