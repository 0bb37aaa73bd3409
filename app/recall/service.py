"""Hybrid recall: vector and full-text candidates fused by reciprocal rank.

Two halves read in one transaction, after the query was embedded: the lexical half (full-text
candidates, the subject's retractions) and the vector half with the result load, which
re-checks each result's state (under READ COMMITTED every statement sees the latest commits).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlmodel import Session

from app.forgetting import retractions
from app.memories import queries as memories
from app.memories.models import MemoryState
from app.memories.schemas import MemoryPublic
from app.recall import candidates
from app.recall.ranking import reciprocal_rank_fusion
from app.recall.schemas import (
    RecallMode,
    RecallRequest,
    RecallResponse,
    RecallResult,
    RetractionPublic,
)

# Each generator offers several times the requested count, so fusion can promote an item one
# list ranks modestly and the other ranks well.
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 40


@dataclass(frozen=True)
class Lexical:
    """What a recall reads without the query embedding."""

    keyword_ids: list[uuid.UUID] | None  # None: the mode uses no keyword list
    retractions: list[RetractionPublic] = field(default_factory=list)


def states_for(request: RecallRequest) -> list[str]:
    states = [MemoryState.active.value]
    if request.include_suspect:
        states.append(MemoryState.suspect.value)
    return states


def candidate_count(limit: int) -> int:
    return max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)


def read_lexical(session: Session, *, tenant_id: uuid.UUID, request: RecallRequest) -> Lexical:
    keyword_ids = None
    if request.mode is not RecallMode.vector:
        found = candidates.by_keywords(
            session, subject=request.subject, states=states_for(request), query=request.query,
            n=candidate_count(request.limit),
        )
        keyword_ids = [memory_id for memory_id, _ in found]
    retracted = [
        RetractionPublic(id=r.id, about=r.about, created_at=r.created_at,
                         memory_count=r.memory_count)
        for r in retractions.for_subject(session, tenant_id=tenant_id, subject=request.subject)
    ]
    return Lexical(keyword_ids, retracted)


def read_vector_and_results(
    session: Session, *, request: RecallRequest, embedding: Sequence[float] | None,
    lexical: Lexical,
) -> RecallResponse:
    states = states_for(request)
    ranked: list[list[uuid.UUID]] = []
    if request.mode is not RecallMode.keyword:
        assert embedding is not None, "vector recall needs the query embedding"
        found = candidates.by_vector(
            session, subject=request.subject, states=states, embedding=embedding,
            n=candidate_count(request.limit),
        )
        ranked.append([memory_id for memory_id, _ in found])
    if lexical.keyword_ids is not None:
        ranked.append(lexical.keyword_ids)
    fused = reciprocal_rank_fusion(ranked)
    results: list[RecallResult] = []
    start = 0
    # A candidate whose memory left the recallable states since its list was read is dropped
    # by the load; the next ones take its place.
    while len(results) < request.limit and start < len(fused):
        batch = fused[start: start + request.limit - len(results)]
        start += len(batch)
        views, history = _load(session, [memory_id for memory_id, _ in batch], states)
        results += [
            RecallResult(memory=views[memory_id], score=round(score, 6),
                         flags=_flags(views[memory_id]), history=history.get(memory_id, []))
            for memory_id, score in batch
            if memory_id in views
        ]
    return RecallResponse(results=results, retractions=lexical.retractions)


def recall(
    session: Session, *, tenant_id: uuid.UUID, request: RecallRequest,
    embedding: Sequence[float] | None,
) -> RecallResponse:
    lexical = read_lexical(session, tenant_id=tenant_id, request=request)
    return read_vector_and_results(session, request=request, embedding=embedding,
                                   lexical=lexical)


# The results still in a recallable state and, beside each, the deprecated memories it
# superseded (shown only as history, never on their own). One statement of two indexed
# lookups (an OR across both conditions would scan the table); the vector and search columns
# are not read.
_LOAD_SQL = text(
    f"""
    SELECT {memories.PUBLIC_COLUMNS}, false AS is_history
    FROM memory m JOIN memory_version v ON v.id = m.current_version_id
    WHERE m.id = ANY(:ids) AND m.state = ANY(:states)
    UNION ALL
    SELECT {memories.PUBLIC_COLUMNS}, true AS is_history
    FROM memory m JOIN memory_version v ON v.id = m.current_version_id
    WHERE m.superseded_by = ANY(:ids) AND m.state = 'deprecated'
    ORDER BY updated_at DESC
    """
)


def _load(
    session: Session, ids: list[uuid.UUID], states: list[str]
) -> tuple[dict[uuid.UUID, MemoryPublic], dict[uuid.UUID, list[MemoryPublic]]]:
    if not ids:
        return {}, {}
    views: dict[uuid.UUID, MemoryPublic] = {}
    history: dict[uuid.UUID, list[MemoryPublic]] = {}
    for row in session.execute(_LOAD_SQL, {"ids": ids, "states": states}).mappings():
        view = memories.public_from_row(row)
        if row["is_history"]:
            assert view.superseded_by is not None
            history.setdefault(view.superseded_by, []).append(view)
        else:
            views[view.id] = view
    return views, history


def _flags(memory: MemoryPublic) -> list[str]:
    flags = list(memory.flags)
    if memory.state is MemoryState.suspect and "suspect" not in flags:
        flags.insert(0, "suspect")
    return flags
