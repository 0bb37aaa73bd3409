"""Hybrid recall: vector and full-text candidates fused by reciprocal rank.

A recall is one read-only transaction, opened after the query was embedded and pipelined
(`db.read_pipeline`): the two candidate lists and the subject's retractions go out together,
then the result load, which re-checks each result's state (under READ COMMITTED every
statement sees the latest commits).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from app.core import db
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


def states_for(request: RecallRequest) -> list[str]:
    states = [MemoryState.active.value]
    if request.include_suspect:
        states.append(MemoryState.suspect.value)
    return states


def candidate_count(limit: int) -> int:
    return max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)


def recall(
    tenant_id: uuid.UUID, request: RecallRequest, embedding: Sequence[float] | None
) -> RecallResponse:
    """Recall in one read transaction, named with the settings its vector list needs.

    Pipelined: BEGIN, the settings, both candidate lists and the retractions travel in one
    round trip; the result load is the second.
    """
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        pending = send_candidates(conn, request=request, embedding=embedding)
        retracted = retractions.recent(conn, tenant_id=tenant_id, subject=request.subject)
        return results(conn, request=request, found=pending.result(), retracted=retracted)


def send_candidates(
    conn: psycopg.Connection[Any], *, request: RecallRequest,
    embedding: Sequence[float] | None,
) -> candidates.PendingLists:
    if request.mode is not RecallMode.keyword:
        assert embedding is not None, "vector recall needs the query embedding"
    return candidates.send(
        conn, subject=request.subject, states=states_for(request),
        n=candidate_count(request.limit),
        embedding=embedding if request.mode is not RecallMode.keyword else None,
        query=request.query if request.mode is not RecallMode.vector else None,
    )


def results(
    conn: psycopg.Connection[Any], *, request: RecallRequest, found: candidates.Lists,
    retracted: psycopg.Cursor[Any],
) -> RecallResponse:
    """The fused candidates still recallable, with their history, and the retractions."""
    states = states_for(request)
    fused = reciprocal_rank_fusion(found.ranked())
    answer: list[RecallResult] = []
    start = 0
    # A candidate whose memory left the recallable states since its list was read is dropped
    # by the load; the next ones take its place.
    while len(answer) < request.limit and start < len(fused):
        batch = fused[start: start + request.limit - len(answer)]
        start += len(batch)
        views, history = _load(conn, [memory_id for memory_id, _ in batch], states)
        answer += [
            RecallResult(memory=views[memory_id], score=round(score, 6),
                         flags=_flags(views[memory_id]), history=history.get(memory_id, []))
            for memory_id, score in batch
            if memory_id in views
        ]
    return RecallResponse(results=answer, retractions=[
        RetractionPublic(id=row["id"], about=row["about"], created_at=row["created_at"],
                         memory_count=row["memory_count"])
        for row in retracted.fetchall()
    ])


# The results still in a recallable state and, beside each, the deprecated memories it
# superseded (shown only as history, never on their own). One statement of two indexed
# lookups (an OR across both conditions would scan the table); the vector and search columns
# are not read.
_LOAD_SQL = f"""
    SELECT {memories.PUBLIC_COLUMNS}, false AS is_history
    FROM memory m JOIN memory_version v ON v.id = m.current_version_id
    WHERE m.id = ANY(%(ids)s) AND m.state = ANY(%(states)s)
    UNION ALL
    SELECT {memories.PUBLIC_COLUMNS}, true AS is_history
    FROM memory m JOIN memory_version v ON v.id = m.current_version_id
    WHERE m.superseded_by = ANY(%(ids)s) AND m.state = 'deprecated'
    ORDER BY updated_at DESC
"""


def _load(
    conn: psycopg.Connection[Any], ids: list[uuid.UUID], states: list[str]
) -> tuple[dict[uuid.UUID, MemoryPublic], dict[uuid.UUID, list[MemoryPublic]]]:
    if not ids:
        return {}, {}
    views: dict[uuid.UUID, MemoryPublic] = {}
    history: dict[uuid.UUID, list[MemoryPublic]] = {}
    with conn.cursor(row_factory=dict_row) as cursor:
        for row in cursor.execute(_LOAD_SQL, {"ids": ids, "states": states}).fetchall():
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
