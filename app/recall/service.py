"""Hybrid recall: vector and full-text candidates fused by reciprocal rank."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, select

from app.memories import queries as memories
from app.memories.models import Memory, MemoryState, MemoryVersion
from app.memories.schemas import MemoryPublic
from app.recall import candidates
from app.recall.ranking import reciprocal_rank_fusion
from app.recall.schemas import RecallMode, RecallResponse, RecallResult

# Each generator offers several times the requested count, so fusion can promote an item one
# list ranks modestly and the other ranks well.
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 40


def recall(
    session: Session,
    *,
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
    views = _views(session, [memory_id for memory_id, _ in fused])
    history = _history(session, list(views))
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
    return RecallResponse(results=results, retractions=[])


def _views(session: Session, ids: list[uuid.UUID]) -> dict[uuid.UUID, MemoryPublic]:
    if not ids:
        return {}
    rows: Sequence[Any] = session.exec(
        select(Memory, MemoryVersion)
        .join(MemoryVersion, col(MemoryVersion.id) == col(Memory.current_version_id))
        .where(col(Memory.id).in_(ids))
    ).all()
    return {memory.id: memories.public(memory, version) for memory, version in rows}


def _history(
    session: Session, ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[MemoryPublic]]:
    """Deprecated memories shown beside the result that superseded them — never alone."""
    if not ids:
        return {}
    rows: Sequence[Any] = session.exec(
        select(Memory, MemoryVersion)
        .join(MemoryVersion, col(MemoryVersion.id) == col(Memory.current_version_id))
        .where(
            col(Memory.superseded_by).in_(ids),
            Memory.state == MemoryState.deprecated.value,
        )
        .order_by(col(Memory.updated_at).desc())
    ).all()
    grouped: dict[uuid.UUID, list[MemoryPublic]] = {}
    for memory, version in rows:
        assert memory.superseded_by is not None
        grouped.setdefault(memory.superseded_by, []).append(memories.public(memory, version))
    return grouped


def _flags(memory: MemoryPublic) -> list[str]:
    flags = list(memory.flags)
    if memory.state is MemoryState.suspect and "suspect" not in flags:
        flags.insert(0, "suspect")
    return flags
