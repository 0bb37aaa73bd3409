"""Hybrid recall: vector and full-text candidates fused by reciprocal rank."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, select

from app.forgetting import retractions
from app.memories import queries as memories
from app.memories.models import Memory, MemoryState, MemoryVersion
from app.memories.schemas import MemoryPublic
from app.recall import candidates
from app.recall.ranking import reciprocal_rank_fusion
from app.recall.schemas import RecallMode, RecallResponse, RecallResult, RetractionPublic

# Each generator offers several times the requested count, so fusion can promote an item one
# list ranks modestly and the other ranks well.
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 40


def recall(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    subject: str,
    query: str,
    embedding: Sequence[float] | None,
    limit: int,
    include_suspect: bool = True,
    mode: RecallMode = RecallMode.hybrid,
) -> RecallResponse:
    states = [MemoryState.active.value]
    if include_suspect:
        states.append(MemoryState.suspect.value)
    n = max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)
    ranked: list[list[uuid.UUID]] = []
    if mode is not RecallMode.keyword:
        assert embedding is not None, "vector recall needs the query embedding"
        found = candidates.by_vector(
            session, subject=subject, states=states, embedding=embedding, n=n
        )
        ranked.append([memory_id for memory_id, _ in found])
    if mode is not RecallMode.vector:
        found = candidates.by_keywords(session, subject=subject, states=states, query=query, n=n)
        ranked.append([memory_id for memory_id, _ in found])
    fused = reciprocal_rank_fusion(ranked)[:limit]
    views, history = _load(session, [memory_id for memory_id, _ in fused])
    results = [
        RecallResult(
            memory=views[memory_id],
            score=round(score, 6),
            flags=_flags(views[memory_id]),
            history=history.get(memory_id, []),
        )
        for memory_id, score in fused
        if memory_id in views
    ]
    retracted = [
        RetractionPublic(id=r.id, about=r.about, created_at=r.created_at,
                         memory_count=r.memory_count)
        for r in retractions.for_subject(session, tenant_id=tenant_id, subject=subject)
    ]
    return RecallResponse(results=results, retractions=retracted)


def _load(
    session: Session, ids: list[uuid.UUID]
) -> tuple[dict[uuid.UUID, MemoryPublic], dict[uuid.UUID, list[MemoryPublic]]]:
    """The results and, beside each, the deprecated memories it superseded.

    A deprecated memory is shown only as history of a result, never on its own. Two indexed
    lookups: one OR across both conditions would scan the table.
    """
    if not ids:
        return {}, {}
    views = {
        memory.id: memories.public(memory, version)
        for memory, version in _with_current_version(session, col(Memory.id).in_(ids))
    }
    history: dict[uuid.UUID, list[MemoryPublic]] = {}
    superseded = _with_current_version(
        session,
        col(Memory.superseded_by).in_(ids),
        col(Memory.state) == MemoryState.deprecated.value,
    )
    for memory, version in superseded:
        assert memory.superseded_by is not None
        history.setdefault(memory.superseded_by, []).append(memories.public(memory, version))
    return views, history


def _with_current_version(session: Session, *where: Any) -> Sequence[Any]:
    return session.exec(
        select(Memory, MemoryVersion)
        .join(MemoryVersion, col(MemoryVersion.id) == col(Memory.current_version_id))
        .where(*where)
        .order_by(col(Memory.updated_at).desc())
    ).all()


def _flags(memory: MemoryPublic) -> list[str]:
    flags = list(memory.flags)
    if memory.state is MemoryState.suspect and "suspect" not in flags:
        flags.insert(0, "suspect")
    return flags
