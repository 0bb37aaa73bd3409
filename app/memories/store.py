"""The memory store: the one module that loads, locks and writes `memory`, `memory_version`
and `provenance_edge` rows, and maps them to the public Memory shape.

- **Locks** are taken in ID order, in one statement per set of rows (`lock`, and the jobs'
  `lock_*` selections), and before any audit append (which holds the tenant's chain lock until
  commit): two writers, or a writer and a job, never wait for each other in a cycle.
- **The public shape** has one mapping: `PUBLIC_COLUMNS` read over
  `memory m JOIN memory_version v`, turned into a `MemoryPublic` by `public`. `views` and
  `view` read through it, and so does recall.
- **Writes**: `insert`, `append_version`, `make_current`, `restate`, `patch`,
  `record_provenance`, `redact_versions`, `purge_contents` and `save`. The lifecycle
  (`app/memories/lifecycle.py`) alone sets the lifecycle columns (state, revision, flags,
  superseded_by, updated_at, state_changed_at, last_validated_at) on rows loaded here and
  saves them through `save`.

- **Legal holds**: `holding` is the rule of which memories an active hold covers, and
  `held_by` asks it for many memories in one statement; `lock_aged` leaves held quarantined
  memories out. The holds' tables (`legal_hold`, `legal_hold_memory`) belong to
  `app/holds/`; they are read here, by name, because the rule joins them with the memory
  tables and the lifecycle, which must ask it before destroying content, may not import a
  package that lists memories through this store.

`queries.py` beside this module is its read-only half: pages, versions and lineage for the
API, and the reads of services that judge memories by their texts. Nothing else in `app/`
reads these tables, with one documented exception: recall (`app/recall/`), whose hot path
reads them with raw, read-only SQL of its own (psycopg pipelines, no ORM) and maps its rows
with `PUBLIC_COLUMNS` and `public` like everything else.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, or_, update
from sqlalchemy import text as sql
from sqlmodel import Session, col, func, select

from app.core import db
from app.memories import sealing, search_terms
from app.memories.errors import MemoryNotFound
from app.memories.models import LIVE_STATES, Memory, MemoryState, MemoryVersion, ProvenanceEdge
from app.memories.schemas import MemoryCreate, MemoryPatch, MemoryPublic, VersionRef

LIVE = [state.value for state in LIVE_STATES]
# A memory not expired at the instant `%(now)s` (raw SQL over `memory m`): recall, live
# listings and contradiction checks read it with the app's clock (`utcnow`), as working
# memories' ages are judged, or with `as_of` (docs/decisions.md, "Expiry").
UNEXPIRED_SQL = "(m.expires_at IS NULL OR m.expires_at > %(now)s)"


def expired(memory: Memory, now: datetime) -> bool:
    """Whether ``memory`` had expired at ``now``."""
    return memory.expires_at is not None and memory.expires_at <= now


def shown_live(now: datetime) -> Any:
    """The ORM condition of live listings: a memory in a live state that has expired by
    ``now`` is left out (once the expiry job deprecates it, it lists as deprecated)."""
    return or_(col(Memory.state).not_in(LIVE), col(Memory.expires_at).is_(None),
               col(Memory.expires_at) > now)

# ---------------------------------------------------------------------------------------------
# The public shape.
# ---------------------------------------------------------------------------------------------

# What `public` needs, over `memory m JOIN memory_version v` (v the current version);
# `updated_at` is the memory's.
PUBLIC_COLUMNS = (
    "m.id, m.tenant_id, m.subject, v.sealed_text, m.revision, v.id AS version_id,"
    " v.seq AS version_seq, m.state, m.volatility, m.key, m.source, m.depends_on,"
    " m.sealed_metadata, m.superseded_by, m.flags, m.created_at, m.updated_at,"
    " m.last_validated_at, m.observed_at, m.session, m.expires_at, m.sealed_subject,"
    " m.sealed_source"
)
_VIEWS = sql(
    f"SELECT {PUBLIC_COLUMNS} FROM memory m JOIN memory_version v ON v.id = m.current_version_id"
    " WHERE m.tenant_id = :tenant_id AND m.id = ANY(CAST(:ids AS uuid[]))"
)


def public(row: Mapping[Any, Any], opener: sealing.Opener | None = None
           ) -> MemoryPublic | None:
    """A memory as the API shows it, from a row of `PUBLIC_COLUMNS` (its text and metadata
    opened here; ``opener``: one read's, for many rows). None when its text was sealed under
    a key an erasure destroyed (a copy restored from before the erasure): every read shows
    such a memory as erased, absent like a forgotten one (`sealing.Opener.erased`)."""
    tenant_id, subject = row["tenant_id"], row["subject"]
    opener = opener or sealing.Opener()
    if opener.erased(tenant_id, subject, row["sealed_text"]):
        return None
    return MemoryPublic(
        id=row["id"], subject=opener.subject(tenant_id, subject, row["id"], row["sealed_subject"]),
        text=opener.text(tenant_id, subject, row["version_id"], row["sealed_text"]),
        revision=row["revision"],
        version=VersionRef(id=row["version_id"], seq=row["version_seq"]),
        state=MemoryState(row["state"]), volatility=row["volatility"], key=row["key"],
        source=opener.source(tenant_id, subject, row["id"], row["source"], row["sealed_source"]),
        depends_on=row["depends_on"],
        metadata=opener.metadata(tenant_id, subject, row["id"], row["sealed_metadata"]),
        superseded_by=row["superseded_by"], flags=row["flags"], created_at=row["created_at"],
        updated_at=row["updated_at"], last_validated_at=row["last_validated_at"],
        observed_at=row["observed_at"], session=row["session"],
        expires_at=row["expires_at"],
    )


def views(
    session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> list[MemoryPublic]:
    """The public shape of these memories, in the order given; those without a version, and
    those an erasure's destroyed key left unreadable (`public`), skipped."""
    if not ids:
        return []
    session.flush()  # a textual statement does not autoflush: read what this session wrote
    rows = session.execute(_VIEWS, {"tenant_id": tenant_id, "ids": [str(i) for i in ids]})
    opener = sealing.Opener()
    found = {view.id: view for view in (public(row, opener) for row in rows.mappings())
             if view is not None}
    return [found[memory_id] for memory_id in ids if memory_id in found]


def view(session: Session, memory: Memory) -> MemoryPublic:
    """The memory's public shape; `MemoryNotFound` when it reads as erased (`public`)."""
    shown = views(session, tenant_id=memory.tenant_id, ids=[memory.id])
    if not shown:
        raise MemoryNotFound()
    return shown[0]


def vector_literal(embedding: Sequence[float]) -> str:
    """An embedding as a pgvector literal, for `CAST(:embedding AS vector)`."""
    return "[" + ",".join(f"{value:.7g}" for value in embedding) + "]"


# ---------------------------------------------------------------------------------------------
# Loading.
# ---------------------------------------------------------------------------------------------


def find(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> Memory | None:
    """The memory in any state, tombstones included."""
    return session.exec(
        select(Memory).where(Memory.id == memory_id, Memory.tenant_id == tenant_id)
    ).first()


def load(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, for_update: bool = False
) -> Memory:
    """A visible memory (forgotten reads as absent), optionally locked for an edit."""
    memory = (lock(session, tenant_id=tenant_id, ids=[memory_id]).get(memory_id) if for_update
              else find(session, tenant_id=tenant_id, memory_id=memory_id))
    if memory is None or memory.state == MemoryState.forgotten:
        raise MemoryNotFound()
    return memory


def state_of(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID) -> str | None:
    return session.exec(
        select(Memory.state).where(Memory.id == memory_id, Memory.tenant_id == tenant_id)
    ).first()


def unforgotten(
    session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID], lock: bool = False,
) -> set[uuid.UUID]:
    """Which of ``ids`` name memories that exist and are not forgotten; with ``lock`` they
    are share-locked in ID order, so none is forgotten before the caller commits."""
    if not ids:
        return set()
    statement = select(Memory.id).where(
        Memory.tenant_id == tenant_id, col(Memory.id).in_(set(ids)),
        Memory.state != MemoryState.forgotten.value,
    )
    if lock:
        statement = statement.order_by(col(Memory.id)).with_for_update(read=True)
    return set(session.exec(statement).all())


def written_by(session: Session, *, tenant_id: uuid.UUID, write_id: uuid.UUID) -> Memory | None:
    """The slot memory a keyed write with this derived ID already added a version to."""
    return session.exec(
        select(Memory)
        .join(MemoryVersion, col(MemoryVersion.memory_id) == col(Memory.id))
        .where(MemoryVersion.operation_id == write_id, Memory.tenant_id == tenant_id)
    ).first()


def lock_slot(session: Session, *, tenant_id: uuid.UUID, subject: str, key: str) -> None:
    """Order every write to ``subject``'s slot ``key`` until the transaction ends.

    Two first writes to an empty slot would both find no holder and both take it.
    """
    session.execute(sql("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
                    {"k": f"memory-slot:{tenant_id}:{subject}:{key}"})


def slot_holder(
    session: Session, *, tenant_id: uuid.UUID, subject: str, key: str,
    other_than: uuid.UUID | None = None,
) -> uuid.UUID | None:
    """The live memory holding ``subject``'s slot ``key``, if any (one at most)."""
    statement = select(Memory.id).where(
        Memory.tenant_id == tenant_id, Memory.subject == subject, Memory.key == key,
        col(Memory.state).in_(LIVE),
    )
    if other_than is not None:
        statement = statement.where(Memory.id != other_than)
    return session.exec(statement).first()


def version_at(session: Session, memory: Memory, seq: int) -> MemoryVersion | None:
    return session.exec(
        select(MemoryVersion).where(MemoryVersion.memory_id == memory.id,
                                    MemoryVersion.seq == seq)
    ).first()


# ---------------------------------------------------------------------------------------------
# Locking (always in ID order, in one statement, with the values the lock returned).
# ---------------------------------------------------------------------------------------------


def lock(
    session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, Memory]:
    """Lock these memories (any state) in ID order; their rows as they are once locked."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = session.exec(_locking(
        select(Memory).where(Memory.tenant_id == tenant_id, col(Memory.id).in_(wanted))
    )).all()
    return {memory.id: memory for memory in rows}


def lock_session(
    session: Session, *, tenant_id: uuid.UUID, name: str, subject: str | None = None
) -> Sequence[Memory]:
    """The memories an agent run wrote that are not forgotten (of one subject, when given),
    locked."""
    query = select(Memory).where(Memory.tenant_id == tenant_id, Memory.session == name,
                                 col(Memory.state) != MemoryState.forgotten.value)
    if subject is not None:
        query = query.where(Memory.subject == subject)
    return session.exec(_locking(query)).all()


def lock_overdue(
    session: Session, *, tenant_id: uuid.UUID, validated_before: Mapping[str, datetime],
    limit: int | None,
) -> Sequence[Memory]:
    """Active memories last validated before their volatility's cutoff, locked."""
    return session.exec(_locking(
        select(Memory)
        .where(Memory.tenant_id == tenant_id, col(Memory.state) == MemoryState.active.value,
               or_(*(and_(col(Memory.volatility) == volatility,
                          col(Memory.last_validated_at) < cutoff)
                     for volatility, cutoff in validated_before.items())))
    ).limit(limit)).all()


def lock_expired(
    session: Session, *, tenant_id: uuid.UUID, now: datetime, limit: int | None,
) -> Sequence[Memory]:
    """Live memories whose `expires_at` is at or before ``now``, locked."""
    return session.exec(_locking(
        select(Memory)
        .where(Memory.tenant_id == tenant_id, col(Memory.state).in_(LIVE),
               col(Memory.expires_at).is_not(None), col(Memory.expires_at) <= now)
    ).limit(limit)).all()


def lock_aged(
    session: Session, *, tenant_id: uuid.UUID, deprecated_before: datetime,
    quarantined_before: datetime, limit: int | None,
) -> Sequence[Memory]:
    """Deprecated and quarantined memories in their state since before the cutoffs, locked.

    A quarantined memory under a legal hold is left out: its next step would destroy it, and
    held ones must not fill a batch that then moves nothing.
    """
    return session.exec(_locking(
        select(Memory)
        .where(Memory.tenant_id == tenant_id, or_(
            and_(col(Memory.state) == MemoryState.deprecated.value,
                 col(Memory.state_changed_at) < deprecated_before),
            and_(col(Memory.state) == MemoryState.quarantined.value,
                 col(Memory.state_changed_at) < quarantined_before,
                 sql(f"NOT {_HELD_ROW}")),
        ))
    ).limit(limit)).all()


def lock_depending(
    session: Session, *, tenant_id: uuid.UUID, key: str, other_than: str
) -> Sequence[Memory]:
    """Live memories whose `depends_on[key]` is a value other than ``other_than``, locked."""
    return session.exec(_locking(
        select(Memory)
        .where(Memory.tenant_id == tenant_id, col(Memory.state).in_(LIVE),
               sql("depends_on ? :key AND depends_on ->> :key <> :value")
               .bindparams(key=key, value=other_than))
    )).all()


def _locking(statement: Any) -> Any:
    # A concurrent locker waits on the rows and, once they are committed, PostgreSQL re-checks
    # the WHERE clause of each: a row that no longer matches is not returned twice.
    return (statement.order_by(col(Memory.id)).with_for_update()
            # The values the lock returned, not objects this session may already hold.
            .execution_options(populate_existing=True))


# ---------------------------------------------------------------------------------------------
# Legal holds (`legal_hold`, `legal_hold_memory`: app/holds/ writes them, the rule reads them).
# ---------------------------------------------------------------------------------------------

ACTIVE_HOLD = "h.tenant_id = m.tenant_id AND h.released_at IS NULL"


def holding(memories: str) -> str:
    """The rule of legal holds, as SQL: a row (memory_id, hold_id, held_since) for every memory
    of ``memories`` (a FROM item named `m` with `id`, `tenant_id`, `subject`, `source`) and
    every active (unreleased) hold covering it. A subject hold covers the subject's memories,
    later ones included; a source hold every memory whose `source`, or a source among whose
    provenance parents, it names; a memory_ids hold the memories it lists.

    One branch per way to be covered, each a join an index serves, so the statement stays
    set-based over thousands of memories.
    """
    return (
        f"SELECT m.id AS memory_id, h.id AS hold_id, h.created_at AS held_since FROM {memories}"
        f" JOIN legal_hold h ON {ACTIVE_HOLD} AND h.subject = m.subject"
        f" UNION ALL SELECT m.id, h.id, h.created_at FROM {memories}"
        f" JOIN legal_hold h ON {ACTIVE_HOLD} AND h.source = m.source"
        f" UNION ALL SELECT m.id, h.id, h.created_at FROM {memories}"
        " JOIN provenance_edge e ON e.tenant_id = m.tenant_id AND e.child_kind = 'memory'"
        " AND e.child_id = m.id AND e.parent_kind = 'source'"
        f" JOIN legal_hold h ON {ACTIVE_HOLD} AND h.source = e.parent_ref"
        f" UNION ALL SELECT m.id, h.id, h.created_at FROM {memories}"
        " JOIN legal_hold_memory hm ON hm.memory_id = m.id"
        f" JOIN legal_hold h ON h.id = hm.hold_id AND {ACTIVE_HOLD}"
    )


# Per memory asked, the oldest active hold covering it. The memories asked are read once
# (materialized): each branch probing the ID list again cost seconds for thousands of IDs.
_HELD_BY = sql(
    "WITH asked AS MATERIALIZED (SELECT id, tenant_id, subject, source FROM memory"
    " WHERE tenant_id = :tenant_id AND id = ANY(CAST(:ids AS uuid[])))"
    f" SELECT DISTINCT ON (memory_id) memory_id, hold_id FROM ({holding('asked m')}) covered"
    " ORDER BY memory_id, held_since, hold_id"
)
# True for a `memory` row of an outer statement that an active hold covers.
_HELD_ROW = ("EXISTS (SELECT 1 FROM ("
             + holding("(SELECT memory.id, memory.tenant_id, memory.subject, memory.source) m")
             + ") covered)")


def held_by(
    session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, uuid.UUID]:
    """Which of these memories an active legal hold covers now: memory ID → hold ID (the
    oldest hold, when several cover it). Memories no hold covers are absent."""
    if not ids:
        return {}
    session.flush()  # a textual statement does not autoflush
    rows = session.execute(_HELD_BY, {"tenant_id": tenant_id,
                                      "ids": [str(i) for i in set(ids)]})
    return {row.memory_id: row.hold_id for row in rows}


# ---------------------------------------------------------------------------------------------
# Writing.
# ---------------------------------------------------------------------------------------------


def count_held(session: Session, *, tenant_id: uuid.UUID) -> int:
    """How many memories the tenant holds (every state but forgotten): what its quota counts."""
    statement = select(func.count()).select_from(Memory).where(
        col(Memory.tenant_id) == tenant_id, col(Memory.state) != MemoryState.forgotten)
    return int(session.exec(statement).one())


def count_forgotten(session: Session, *, tenant_id: uuid.UUID) -> int:
    """How many of the tenant's memories are forgotten (tombstones)."""
    statement = select(func.count()).select_from(Memory).where(
        col(Memory.tenant_id) == tenant_id, col(Memory.state) == MemoryState.forgotten)
    return int(session.exec(statement).one())


def insert(
    session: Session, *, memory_id: uuid.UUID, tenant_id: uuid.UUID, body: MemoryCreate,
    subject: str, source: str | None,
) -> Memory:
    """A new memory (revision 1, active) from a write as stored (``body``: subject and source
    digested; ``subject`` and ``source``: the strings, kept sealed); its first version is
    appended next."""
    memory = Memory(
        id=memory_id, tenant_id=tenant_id, subject=body.subject, key=body.key,
        volatility=body.volatility.value, source=body.source, depends_on=dict(body.depends_on),
        sealed_metadata=sealing.seal_metadata(tenant_id, body.subject, memory_id,
                                              dict(body.metadata)),
        session=body.session, expires_at=body.expires_at,
        sealed_subject=sealing.seal_subject(tenant_id, body.subject, memory_id, subject),
        sealed_source=sealing.seal_source(tenant_id, body.subject, memory_id, source),
    )
    # Unless the write says when it was said, it was said when written.
    memory.observed_at = body.observed_at or memory.created_at
    session.add(memory)
    session.flush()
    return memory


def append_version(
    session: Session, memory: Memory, text: str, embedding: list[float] | None,
    *, operation_id: uuid.UUID | None = None, first: bool = False,
) -> MemoryVersion:
    """A new current version of ``memory`` (the pointer moves; the revision does not);
    ``first``: the version of a memory just inserted, whose number needs no lookup."""
    last = 0 if first else session.exec(
        select(func.max(MemoryVersion.seq)).where(MemoryVersion.memory_id == memory.id)
    ).one()
    version_id = uuid.uuid4()
    version = MemoryVersion(
        id=version_id, tenant_id=memory.tenant_id, memory_id=memory.id, seq=(last or 0) + 1,
        embedding=embedding, operation_id=operation_id,
        **_sealed(session, memory, {version_id: text})[version_id],
    )
    session.add(version)
    session.flush()
    make_current(memory, version)
    return version


def current_version(session: Session, memory: Memory) -> MemoryVersion:
    """The version ``memory`` points at (a correction that adds none names it)."""
    version = session.get(MemoryVersion, memory.current_version_id)
    assert version is not None, "every memory has a current version"
    return version


def make_current(memory: Memory, version: MemoryVersion) -> None:
    memory.current_version_id = version.id


def restate(memory: Memory, body: MemoryCreate, *, source: str | None) -> None:
    """A restated slot takes the fields the new write (as stored) names, and keeps the others
    (``source``: the source string, kept sealed)."""
    given = body.model_fields_set
    if "volatility" in given:
        memory.volatility = body.volatility.value
    if "source" in given:
        memory.source = body.source
        memory.sealed_source = sealing.seal_source(memory.tenant_id, memory.subject, memory.id,
                                                   source)
    if "depends_on" in given:
        memory.depends_on = dict(body.depends_on)
    if "metadata" in given:
        _set_metadata(memory, dict(body.metadata))
    if body.observed_at is not None:
        memory.observed_at = body.observed_at
    if "session" in given:
        memory.session = body.session
    if "expires_at" in given:
        memory.expires_at = body.expires_at


def promote(memory: Memory, volatility: str) -> None:
    """A working memory made durable: it takes a durable class and stays past its session."""
    memory.volatility = volatility


def patch(memory: Memory, changes: MemoryPatch) -> None:
    """The fields a correction names (its text is a new version: `append_version`)."""
    if changes.volatility is not None:
        memory.volatility = changes.volatility.value
    if changes.depends_on is not None:
        memory.depends_on = dict(changes.depends_on)
    if changes.metadata is not None:
        _set_metadata(memory, dict(changes.metadata))
    if "expires_at" in changes.model_fields_set:
        memory.expires_at = changes.expires_at  # null clears it


def _set_metadata(memory: Memory, metadata: dict[str, Any]) -> None:
    memory.sealed_metadata = sealing.seal_metadata(memory.tenant_id, memory.subject, memory.id,
                                                   metadata)


def _sealed(session: Session, memory: Memory,
            texts: Mapping[uuid.UUID, str]) -> dict[uuid.UUID, dict[str, Any]]:
    """The stored columns of these versions of ``memory`` with these texts: each sealed, and
    its search terms hashed, under the subject's key (one statement reads every text's
    lexemes)."""
    if not texts:
        return {}
    key = sealing.key_for_writing(memory.tenant_id, memory.subject)
    terms = search_terms.documents(db.driver_connection(session), key, list(texts.values()))
    return {version_id: {
        "sealed_text": sealing.seal_text(memory.tenant_id, memory.subject, version_id, text,
                                         key=key),
        "search": document,
    } for (version_id, text), document in zip(texts.items(), terms, strict=True)}


def record_provenance(
    session: Session, *, tenant_id: uuid.UUID, child_id: uuid.UUID, source: str | None = None,
    derived_from: Sequence[uuid.UUID] = (), child_kind: str = "memory",
) -> None:
    """Edges from ``child_id`` (a memory, or an artifact registered by the product) to its
    source and the memories it was derived from."""
    parents = ([("source", source)] if source else []) + [
        ("memory", str(parent)) for parent in dict.fromkeys(derived_from) if parent != child_id
    ]
    for kind, ref in parents:
        session.add(ProvenanceEdge(tenant_id=tenant_id, child_kind=child_kind,
                                   child_id=child_id, parent_kind=kind, parent_ref=ref))


def redact_versions(session: Session, memory: Memory, texts: Mapping[uuid.UUID, str]) -> None:
    """Give these versions of ``memory`` new texts (and search terms) and drop their vectors
    (a vector encodes the old text)."""
    for version_id, columns in _sealed(session, memory, texts).items():
        session.execute(
            update(MemoryVersion).where(col(MemoryVersion.id) == version_id,
                                        col(MemoryVersion.memory_id) == memory.id)
            .values(**columns, embedding=None)
        )


def purge_contents(session: Session, memories: Sequence[Memory]) -> int:
    """Empty every version of these memories, in one statement however many; returns how
    many were emptied. (`tombstone_rows` clears the memory rows' content fields.)

    The versions keep their rows with no text, no search terms and no vector.
    """
    if not memories:
        return 0
    result = session.execute(
        update(MemoryVersion)
        .where(col(MemoryVersion.memory_id).in_([memory.id for memory in memories]))
        .values(sealed_text=sealing.EMPTY, search="", embedding=None)
        # No synchronization by SQLAlchemy (both of its ways cost seconds over thousands of
        # rows): the loaded versions of these memories are expired below, in one pass.
        .execution_options(synchronize_session=False)
    )
    _expire(session, MemoryVersion, "memory_id", {memory.id for memory in memories})
    return int(getattr(result, "rowcount", 0) or 0)


def tombstone_rows(session: Session, memories: Sequence[Memory], *, at: datetime) -> None:
    """The lifecycle columns of a batch of tombstones, in one statement (for
    `lifecycle.tombstone`, which owns the rule): state `forgotten`, revision + 1, the times,
    and the content fields cleared. The loaded rows are updated to match."""
    if not memories:
        return
    session.execute(
        update(Memory)
        .where(col(Memory.id).in_([memory.id for memory in memories]))
        .values(state=MemoryState.forgotten.value, revision=Memory.revision + 1,
                updated_at=at, state_changed_at=at, key=None, depends_on={},
                sealed_metadata=sealing.EMPTY,
                flags=[])
        .execution_options(synchronize_session=False)
    )
    for memory in memories:
        session.expire(memory)  # read again, as written, when next used


def _expire(session: Session, model: type[Any], column: str, values: set[Any]) -> None:
    """Expire the loaded objects of ``model`` whose ``column`` is in ``values``."""
    for loaded in list(session.identity_map.values()):
        if isinstance(loaded, model) and getattr(loaded, column) in values:
            session.expire(loaded)


def save(session: Session, memory: Memory, *, flush: bool = False) -> None:
    """Write a loaded memory's changed columns (at the next flush, or now)."""
    session.add(memory)
    if flush:
        session.flush()


# ---------------------------------------------------------------------------------------------
# Erasure: a subject's memories, their sources, and what replaces their names.
# ---------------------------------------------------------------------------------------------


def ids_of_subject(session: Session, *, tenant_id: uuid.UUID, subject: str) -> list[uuid.UUID]:
    """Every memory of the subject, in every state."""
    return list(session.exec(
        select(Memory.id).where(Memory.tenant_id == tenant_id, Memory.subject == subject)
    ).all())


_SOURCES_OF = sql(
    "SELECT source FROM memory WHERE tenant_id = :tenant_id AND id = ANY(CAST(:ids AS uuid[]))"
    " AND source IS NOT NULL"
    " UNION SELECT parent_ref FROM provenance_edge WHERE tenant_id = :tenant_id"
    " AND child_kind = 'memory' AND parent_kind = 'source'"
    " AND child_id = ANY(CAST(:ids AS uuid[]))"
)


def sources_of(session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID]) -> set[str]:
    """The sources these memories cite, as their `source` or as provenance parents."""
    if not ids:
        return set()
    session.flush()
    rows = session.execute(_SOURCES_OF, {"tenant_id": tenant_id, "ids": [str(i) for i in ids]})
    return {row[0] for row in rows}


_SOURCE_COPIES = sql(
    "SELECT DISTINCT ON (source) id, tenant_id, subject, source, sealed_source FROM memory"
    " WHERE tenant_id = :tenant_id AND source = ANY(CAST(:digests AS text[]))"
    " AND sealed_source IS NOT NULL ORDER BY source, created_at DESC"
)


def source_names(session: Session, *, tenant_id: uuid.UUID, digests: Sequence[str]
                 ) -> dict[str, str]:
    """Sources by their stored digests, as strings: each from the sealed copy of a memory
    that cites it (a source no memory's copy opens any more is left out)."""
    if not digests:
        return {}
    session.flush()
    opener = sealing.Opener()
    found = {}
    for row in session.execute(_SOURCE_COPIES, {"tenant_id": tenant_id,
                                                "digests": sorted(set(digests))}):
        shown = opener.source(row.tenant_id, row.subject, row.id, row.source, row.sealed_source)
        if shown and shown != row.source and not shown.startswith("erased:"):
            found[row.source] = shown
    return found


_RENAME_SUBJECT = sql(
    "UPDATE memory SET subject = :marker, sealed_subject = '', sealed_source = NULL"
    " WHERE tenant_id = :tenant_id"
    " AND id = ANY(CAST(:ids AS uuid[])) AND state = 'forgotten'"
)
_RENAME_SOURCE = sql(
    "UPDATE memory m SET source = v.marker"
    " FROM unnest(CAST(:plain AS text[]), CAST(:markers AS text[])) AS v(plain, marker)"
    " WHERE m.tenant_id = :tenant_id AND m.id = ANY(CAST(:ids AS uuid[]))"
    " AND m.state = 'forgotten' AND m.source = v.plain"
)
_RENAME_SOURCE_EDGES = sql(
    "UPDATE provenance_edge e SET parent_ref = v.marker"
    " FROM unnest(CAST(:plain AS text[]), CAST(:markers AS text[])) AS v(plain, marker)"
    " WHERE e.tenant_id = :tenant_id AND e.child_kind = 'memory' AND e.parent_kind = 'source'"
    " AND e.child_id = ANY(CAST(:ids AS uuid[])) AND e.parent_ref = v.plain"
)


def anonymize(
    session: Session, *, tenant_id: uuid.UUID, ids: Sequence[uuid.UUID], subject_marker: str,
    source_markers: Mapping[str, str],
) -> None:
    """Replace the subject and the sources of these tombstones (forgotten memories only) by
    their markers, on the rows and on their provenance edges: after an erasure the IDs stay
    and the names go."""
    if not ids:
        return
    session.flush()
    params: dict[str, Any] = {"tenant_id": tenant_id, "ids": [str(i) for i in ids]}
    session.execute(_RENAME_SUBJECT, {**params, "marker": subject_marker})
    if source_markers:
        plain = sorted(source_markers)
        renames = {**params, "plain": plain, "markers": [source_markers[p] for p in plain]}
        session.execute(_RENAME_SOURCE, renames)
        session.execute(_RENAME_SOURCE_EDGES, renames)
    session.expire_all()  # loaded rows still show the old names


# ---------------------------------------------------------------------------------------------
# Provenance: what was derived from which memories.
# ---------------------------------------------------------------------------------------------

# Every memory-derived thing reachable from the start set, through derived memories. UNION
# (not UNION ALL) drops a row already found, so a cycle of derivations ends.
_DESCENDANTS = sql(
    "WITH RECURSIVE derived(kind, id) AS ("
    " SELECT e.child_kind, e.child_id FROM provenance_edge e"
    " WHERE e.tenant_id = :tenant_id AND e.parent_kind = 'memory'"
    " AND e.parent_ref = ANY(CAST(:refs AS text[]))"
    " UNION"
    " SELECT e.child_kind, e.child_id FROM derived d JOIN provenance_edge e"
    " ON e.tenant_id = :tenant_id AND e.parent_kind = 'memory' AND e.parent_ref = d.id::text"
    " WHERE d.kind = 'memory'"
    ") SELECT kind, id FROM derived"
)


def descendants(
    session: Session, *, tenant_id: uuid.UUID, memory_ids: Sequence[uuid.UUID]
) -> dict[str, set[uuid.UUID]]:
    """Everything derived from these memories, directly or through memories derived from
    them (in any state and any subject), by kind: ``{"memory": {...}, "artifact": {...}}``."""
    found: dict[str, set[uuid.UUID]] = {}
    if not memory_ids:
        return found
    session.flush()  # a textual statement does not autoflush
    rows = session.execute(_DESCENDANTS, {"tenant_id": tenant_id,
                                          "refs": sorted({str(i) for i in memory_ids})})
    for kind, child_id in rows:
        found.setdefault(kind, set()).add(child_id)
    return found


def children(
    session: Session, *, tenant_id: uuid.UUID, memory_ids: Sequence[uuid.UUID], child_kind: str
) -> list[uuid.UUID]:
    """The things of ``child_kind`` derived directly from these memories."""
    if not memory_ids:
        return []
    return list(session.exec(
        select(ProvenanceEdge.child_id).distinct().where(
            ProvenanceEdge.tenant_id == tenant_id, ProvenanceEdge.child_kind == child_kind,
            ProvenanceEdge.parent_kind == "memory",
            col(ProvenanceEdge.parent_ref).in_(sorted({str(i) for i in memory_ids})),
        )
    ).all())


def parents(
    session: Session, *, tenant_id: uuid.UUID, child_kind: str, child_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[uuid.UUID]]:
    """The memories each of these things was derived from, in the order they were recorded."""
    if not child_ids:
        return {}
    rows = session.exec(
        select(ProvenanceEdge.child_id, ProvenanceEdge.parent_ref).where(
            ProvenanceEdge.tenant_id == tenant_id, ProvenanceEdge.child_kind == child_kind,
            ProvenanceEdge.parent_kind == "memory", col(ProvenanceEdge.child_id).in_(child_ids),
        ).order_by(col(ProvenanceEdge.created_at), col(ProvenanceEdge.id))
    ).all()
    found: dict[uuid.UUID, list[uuid.UUID]] = {}
    for child_id, parent_ref in rows:
        found.setdefault(child_id, []).append(uuid.UUID(parent_ref))
    return found


def edges_into(
    session: Session, *, tenant_id: uuid.UUID, child_ids: Sequence[uuid.UUID]
) -> list[tuple[str, uuid.UUID, str, str]]:
    """Every edge into these things, as ``(child_kind, child_id, parent_kind, parent_ref)``,
    in the order recorded: one step up a provenance walk."""
    if not child_ids:
        return []
    return _edges(session, tenant_id, col(ProvenanceEdge.child_id).in_(sorted(set(child_ids))))


def edges_from(
    session: Session, *, tenant_id: uuid.UUID, memory_ids: Sequence[uuid.UUID]
) -> list[tuple[str, uuid.UUID, str, str]]:
    """Every edge out of these memories, as ``(child_kind, child_id, "memory", parent_ref)``,
    in the order recorded: one step down a provenance walk."""
    if not memory_ids:
        return []
    return _edges(session, tenant_id, ProvenanceEdge.parent_kind == "memory",
                  col(ProvenanceEdge.parent_ref).in_(sorted({str(i) for i in memory_ids})))


def _edges(
    session: Session, tenant_id: uuid.UUID, *where: Any
) -> list[tuple[str, uuid.UUID, str, str]]:
    rows = session.exec(
        select(ProvenanceEdge.child_kind, ProvenanceEdge.child_id, ProvenanceEdge.parent_kind,
               ProvenanceEdge.parent_ref)
        .where(ProvenanceEdge.tenant_id == tenant_id, *where)
        .order_by(col(ProvenanceEdge.created_at), col(ProvenanceEdge.id))
    ).all()
    return [tuple(row) for row in rows]  # type: ignore[misc]


def drop_provenance(
    session: Session, *, tenant_id: uuid.UUID, child_kind: str, child_id: uuid.UUID
) -> None:
    """Forget where ``child_id`` came from (its registration was withdrawn)."""
    session.execute(
        delete(ProvenanceEdge).where(
            col(ProvenanceEdge.tenant_id) == tenant_id,
            col(ProvenanceEdge.child_kind) == child_kind,
            col(ProvenanceEdge.child_id) == child_id,
        )
    )
