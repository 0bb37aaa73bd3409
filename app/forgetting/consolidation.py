"""Consolidation: near-duplicate live memories of a subject collapse into the newest.

A pair is a near-duplicate when the supersession rule (`app/text/supersession.py`, the
same one write-time contradiction detection uses) is *sure* it is a restatement; an unsure
verdict ("I work on the frontend team" / "… backend team") never collapses anything. The
others become `deprecated` with `superseded_by` the kept memory, through the one transition
function (audited), and the kept memory gets a provenance edge to each (memory ← memory).

Nothing comes back: a collapsed memory keeps what it superseded pointing at itself, so recall
(which shows a deprecated memory only as history of a *result*) never shows those again, and
forgetting the kept memory later brings none of them back either.

Clusters form newest first and without chaining: the newest memory not yet placed is kept,
and the older memories that restate *it* directly collapse into it. A memory that restates
only a collapsed one stays (A ≈ B ≈ C with A ≉ C keeps A and C): drifting paraphrases never
merge two facts that are not restatements of each other. A memory holding a slot (`key`) is
never collapsed into another: the slot is the caller's name for it.

Scale: candidate pairs come from SQL, one subject at a time (pgvector distance between the
current versions of the subject's live memories, below 1 − `restatement_min_similarity`);
only those pairs reach Python. Locks: every row a run will change is locked in one statement
in id order before the first audit append, then re-checked (still live, same version): an
overlapping run waits, finds the work done and changes nothing; none waits in a cycle.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from app.audit import service as audit
from app.memories import contradictions, queries, store
from app.memories.lifecycle import transition
from app.memories.models import LIVE_STATES, MemoryState
from app.text.supersession import Relation, Thresholds, classify_similar

ACTOR = audit.system_actor("consolidate")
REASON = "consolidated"
LIVE = [state.value for state in LIVE_STATES]


@dataclass(frozen=True)
class Collapse:
    memory: queries.Stated
    into: queries.Stated


def subjects(session: Session, *, tenant_id: uuid.UUID) -> list[str]:
    """The tenant's subjects with two live memories or more: the only ones with duplicates."""
    return queries.crowded_subjects(session, tenant_id=tenant_id)


def consolidate(
    session: Session, *, tenant_id: uuid.UUID, subject: str | None = None
) -> list[str]:
    """Collapse the near-duplicates of ``subject`` (or of every subject); the IDs deprecated."""
    limits = contradictions.thresholds(session, tenant_id=tenant_id)
    names = [subject] if subject is not None else subjects(session, tenant_id=tenant_id)
    planned = [collapse for name in names
               for collapse in plan(session, tenant_id=tenant_id, subject=name, limits=limits)]
    return apply(session, tenant_id=tenant_id, planned=planned)


def plan(
    session: Session, *, tenant_id: uuid.UUID, subject: str, limits: Thresholds
) -> list[Collapse]:
    """What one subject's consolidation would collapse into what (reads only)."""
    pairs = queries.near_pairs(session, tenant_id=tenant_id, subject=subject,
                               max_distance=1.0 - limits.restatement_min)
    if not pairs:
        return []
    stated = queries.stated(session, list({row[0] for row in pairs} | {row[2] for row in pairs}))
    same: dict[uuid.UUID, set[uuid.UUID]] = {}
    for a_id, a_version, b_id, b_version, similarity in pairs:
        a, b = stated.get(a_id), stated.get(b_id)
        if a is None or b is None or (a.version_id, b.version_id) != (a_version, b_version):
            continue  # edited between the two reads: the next run sees it settled
        older, newer = sorted((a, b), key=_order)
        verdict = classify_similar(newer.text, older.text, similarity, limits)
        if verdict.relation is Relation.restatement and verdict.sure:
            same.setdefault(a.id, set()).add(b.id)
            same.setdefault(b.id, set()).add(a.id)
    return _clusters(stated, same)


def _order(stated: queries.Stated) -> tuple[datetime, uuid.UUID]:
    """Oldest first: by when the current text was stated."""
    return (stated.at, stated.id)


def _clusters(stated: dict[uuid.UUID, queries.Stated],
              same: dict[uuid.UUID, set[uuid.UUID]]) -> list[Collapse]:
    placed: set[uuid.UUID] = set()
    collapses: list[Collapse] = []
    for kept in sorted((stated[i] for i in same), key=_order, reverse=True):
        if kept.id in placed:
            continue
        placed.add(kept.id)
        for other_id in sorted(same[kept.id]):
            other = stated[other_id]
            if other_id not in placed and _order(other) < _order(kept) and other.key is None:
                placed.add(other_id)
                collapses.append(Collapse(other, kept))
    return collapses


def apply(session: Session, *, tenant_id: uuid.UUID, planned: Sequence[Collapse]) -> list[str]:
    """Lock, re-check and collapse; returns the IDs deprecated."""
    ids = {c.memory.id for c in planned} | {c.into.id for c in planned}
    rows = store.lock(session, tenant_id=tenant_id, ids=list(ids))
    planned_version = {c.memory.id: c.memory.version_id for c in planned} | {
        c.into.id: c.into.version_id for c in planned}

    def unchanged(memory_id: uuid.UUID) -> bool:
        row = rows.get(memory_id)
        return (row is not None and row.state in LIVE
                and row.current_version_id == planned_version[memory_id])

    deprecated: list[str] = []
    for collapse in sorted(planned, key=lambda c: c.memory.id):
        if not (unchanged(collapse.memory.id) and unchanged(collapse.into.id)):
            continue  # an overlapping run or an edit got there first
        memory, kept = rows[collapse.memory.id], rows[collapse.into.id]
        transition(session, memory, MemoryState.deprecated, reason=REASON, actor=ACTOR,
                   superseded_by=kept.id)
        store.record_provenance(session, tenant_id=tenant_id, child_id=kept.id,
                                derived_from=[memory.id])
        deprecated.append(str(memory.id))
    session.flush()
    return deprecated

