"""Statements on `erasure_target`: the cascade's plan and checkpoint."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from sqlalchemy import text as sql
from sqlmodel import Session

_PLAN = sql(
    "INSERT INTO erasure_target (request_id, memory_id, tenant_id, derived)"
    " SELECT :request_id, v.id, :tenant_id, v.derived"
    " FROM unnest(CAST(:ids AS uuid[]), CAST(:derived AS boolean[])) AS v(id, derived)"
    " ON CONFLICT DO NOTHING"
)
_NEXT = sql(
    "SELECT memory_id, derived FROM erasure_target WHERE request_id = :request_id"
    " AND NOT done AND held_by IS NULL ORDER BY memory_id LIMIT :limit"
)
_DONE = sql(
    "UPDATE erasure_target t SET done = true, held_by = NULL, erased_seq = v.seq"
    " FROM unnest(CAST(:ids AS uuid[]), CAST(:seqs AS integer[])) AS v(id, seq)"
    " WHERE t.request_id = :request_id AND t.memory_id = v.id"
)
_HELD = sql(
    "UPDATE erasure_target t SET held_by = v.hold_id"
    " FROM unnest(CAST(:ids AS uuid[]), CAST(:holds AS uuid[])) AS v(id, hold_id)"
    " WHERE t.request_id = :request_id AND t.memory_id = v.id"
)
_COUNTS = sql(
    "SELECT count(*) AS total, count(*) FILTER (WHERE done) AS done,"
    " count(*) FILTER (WHERE NOT done AND held_by IS NOT NULL) AS held,"
    " count(*) FILTER (WHERE NOT done AND held_by IS NULL) AS left"
    " FROM erasure_target WHERE request_id = :request_id"
)
_DONE_OWN = sql(
    "SELECT memory_id FROM erasure_target WHERE request_id = :request_id AND done"
    " AND NOT derived"
)
_DONE_ALL = sql("SELECT memory_id FROM erasure_target WHERE request_id = :request_id AND done")
_UNHOLD = sql(
    "UPDATE erasure_target SET held_by = NULL WHERE request_id = :request_id AND NOT done"
    " AND held_by IS NOT NULL"
)


def plan(
    session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID,
    own: Sequence[uuid.UUID], derived: Sequence[uuid.UUID],
) -> int:
    """Add these memories to the plan (those already in it stay as they are); returns how
    many are new."""
    ids = [*own, *derived]
    if not ids:
        return 0
    result = session.execute(_PLAN, {
        "request_id": request_id, "tenant_id": tenant_id, "ids": [str(i) for i in ids],
        "derived": [False] * len(own) + [True] * len(derived)})
    return int(getattr(result, "rowcount", 0) or 0)


def next_batch(session: Session, *, request_id: uuid.UUID, limit: int
               ) -> list[tuple[uuid.UUID, bool]]:
    """The next planned memories neither done nor held, in ID order: (ID, derived)."""
    rows = session.execute(_NEXT, {"request_id": request_id, "limit": limit})
    return [(row.memory_id, bool(row.derived)) for row in rows]


def mark_done(session: Session, *, request_id: uuid.UUID, seqs: Mapping[uuid.UUID, int | None]
              ) -> None:
    """Done: erased by this erasure (with its place in the receipt), or nothing to erase
    (already a tombstone: no place)."""
    if seqs:
        ids = list(seqs)
        session.execute(_DONE, {"request_id": request_id, "ids": [str(i) for i in ids],
                                "seqs": [seqs[i] for i in ids]})


def mark_held(session: Session, *, request_id: uuid.UUID, holds: Mapping[uuid.UUID, uuid.UUID]
              ) -> None:
    if holds:
        ids = list(holds)
        session.execute(_HELD, {"request_id": request_id, "ids": [str(i) for i in ids],
                                "holds": [str(holds[i]) for i in ids]})


def counts(session: Session, *, request_id: uuid.UUID) -> dict[str, int]:
    """How many planned memories there are, done, held, and left to do."""
    row = session.execute(_COUNTS, {"request_id": request_id}).one()
    return {"total": row.total, "done": row.done, "held": row.held, "left": row.left}


def done(session: Session, *, request_id: uuid.UUID, own_only: bool) -> list[uuid.UUID]:
    rows = session.execute(_DONE_OWN if own_only else _DONE_ALL, {"request_id": request_id})
    return [row.memory_id for row in rows]


def unhold(session: Session, *, request_id: uuid.UUID) -> None:
    """Resume: memories a hold kept are tried again (one still held is found held again)."""
    session.execute(_UNHOLD, {"request_id": request_id})
