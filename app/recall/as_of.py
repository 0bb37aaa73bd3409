"""Point-in-time recall (`as_of`): the answer recall would have given at that instant.

The subject's memories as they stood then are replayed from their audit trails
(`queries.memories_then`: written by then, not forgotten since, each with its state, flags,
version and expiry then); the versions current then are read with the terms of the query
they hold, and both candidate lists are ranked here exactly as a small subject's are
(`small_subjects`: cosine order, and BM25 with statistics over the memories live then). Then
the results in the asked-for states and unexpired at the instant, each with the deprecated
memories it had superseded by then, and the retractions filed by then. Forgotten content
never returns: a forgotten memory is not replayed at all, and a struck version is read as it
is stored now, without what was struck.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import psycopg

from app.core import db
from app.memories import queries, search_terms
from app.memories.models import LIVE_STATES
from app.recall import ranking, retractions, small_subjects, working
from app.recall.schemas import RecallMode, RecallRequest, RecallResponse, RecallResult

LIVE = {state.value for state in LIVE_STATES}

# The versions current at the instant, as `small_subjects` reads a subject's current ones:
# the vector, the query's terms the version holds and how often, its length, and
# whether its memory is eligible then.
_ROWS_SQL = f"""
    WITH query AS MATERIALIZED (SELECT %(terms)s::text[] AS terms)
    SELECT c.memory_id, vector_send(v.embedding), held.terms, held.frequencies,
           lethe_text_length(v.search), c.eligible
    FROM unnest(%(memory_ids)s::uuid[], %(version_ids)s::uuid[], %(eligible)s::bool[])
         AS c(memory_id, version_id, eligible)
    JOIN memory_version v ON v.id = c.version_id
    CROSS JOIN query q
    {small_subjects.HELD_TERMS}
"""


def recall(tenant_id: uuid.UUID, request: RecallRequest, at: datetime,
           embedding: Sequence[float] | None) -> RecallResponse:
    """``request`` answered as of ``at`` (never after now: the caller caps it)."""
    states = set(_states(request))
    n = max(request.limit * 4, 40)
    with db.read_pipeline(tenant_id) as conn:
        terms = ([] if request.mode is RecallMode.vector else search_terms.query_terms(
            conn, tenant_id=tenant_id, subject=request.subject, query=request.query))
        retracted = retractions.recent(conn, tenant_id=tenant_id, subject=request.subject,
                                       at=at)
        settings = working.send(conn, tenant_id=tenant_id)
        then = queries.memories_then(conn, tenant_id=tenant_id, at=at,
                                     subject=request.subject)
        # BM25's statistics are over the memories live then, as recall's are over those
        # live now; the eligible ones are in the asked-for states and unexpired then.
        live = [memory for memory in then if memory.then.state in LIVE]
        rows = _rows(conn, live, terms, eligible=[
            memory.then.state in states and not memory.then.expired(at) for memory in live])
        clock = replace(working.clock(settings), now=at)
        shown_retractions = retractions.shown(retracted, tenant_id=tenant_id,
                                              subject=request.subject)
        vector: list[tuple[uuid.UUID, float]] | None = (
            [] if request.mode is not RecallMode.keyword else None)
        keyword: list[tuple[uuid.UUID, float]] | None = (
            [] if request.mode is not RecallMode.vector else None)
        if rows is not None:
            if vector is not None:
                assert embedding is not None, "vector recall needs the query embedding"
                vector = rows.nearest(embedding, n)
            if keyword is not None:
                keyword = rows.keyword(n)
        fused = ranking.fuse(vector, keyword)
        by_id = {memory.id: memory for memory in then}
        views = {view.id: view for view in queries.views_then(
            conn, [by_id[memory_id] for memory_id, _ in fused], at)}
        # As recall's result load: a working memory past its multiple of half-lives then is
        # not recallable, and the next candidates take its place.
        kept = [(memory_id, score) for memory_id, score in fused
                if memory_id in views and not clock.omitted(views[memory_id])]
        chosen = kept[: ranking.tie_end(kept, request.limit)]
        superseded = [memory for memory in then if memory.then.state == "deprecated"
                      and memory.then.superseded_by in views]
        history: dict[uuid.UUID, list[Any]] = {}
        for view in sorted(queries.views_then(conn, superseded, at),
                           key=lambda view: view.updated_at, reverse=True):
            assert view.superseded_by is not None
            history.setdefault(view.superseded_by, []).append(view)
    answer = [
        RecallResult(memory=views[memory_id], score=ranking.shown(score),
                     flags=_flags(views[memory_id].flags, views[memory_id], clock),
                     history=history.get(memory_id, []))
        for memory_id, score in chosen]
    return RecallResponse(results=ranking.order(answer)[: request.limit],
                          retractions=shown_retractions)


def _states(request: RecallRequest) -> list[str]:
    return ["active", "suspect"] if request.include_suspect else ["active"]


def _rows(conn: psycopg.Connection[Any], live: Sequence[queries.MemoryThen],
          terms: Sequence[str], eligible: list[bool]) -> small_subjects.SubjectRows | None:
    if not live:
        return None
    return small_subjects.PendingRows(conn.execute(_ROWS_SQL, {
        "terms": list(terms), "memory_ids": [memory.id for memory in live],
        "version_ids": [memory.then.version_id for memory in live], "eligible": eligible,
    }, binary=True), frozenset(terms)).result()


def _flags(flags: list[str], memory: Any, clock: working.Clock) -> list[str]:
    shown = list(flags)
    if memory.state == "suspect" and "suspect" not in shown:
        shown.insert(0, "suspect")
    if clock.stale(memory) and working.FLAG not in shown:
        shown.append(working.FLAG)
    return shown
