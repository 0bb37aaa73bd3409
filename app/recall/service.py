"""Hybrid recall: vector and full-text candidates fused by reciprocal rank.

What needs no query vector is read while the query is still being embedded: the subject's
retractions, and either a small subject whole (`small_subjects`: both lists are then ranked
here) or a larger subject's size and keyword list. Then the vector list, once the vector is
there (ranked here, or by the database), then the result load, which re-checks each result's
state (under READ COMMITTED every statement sees the latest commits, so two transactions see
no less current a view than one).
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from app.core import db
from app.core.models import utcnow
from app.keys import digests
from app.memories import sealing, search_terms
from app.memories import store as memories
from app.memories.models import MemoryState
from app.memories.schemas import MemoryPublic
from app.recall import (
    as_of,
    bm25_lists,
    candidates,
    ranking,
    retractions,
    small_subjects,
    working,
)
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
    tenant_id: uuid.UUID, request: RecallRequest, embedding: candidates.Embedding | None
) -> RecallResponse:
    """Recall in pipelined read transactions (everything sent before a fetch is one round
    trip).

    Given a query still being embedded (a future), what needs no vector is read meanwhile
    in a transaction of its own, which ends before the vector is awaited: no transaction
    waits on the model. A small subject's lists are then ranked here; a larger subject's
    vector list goes out in a second transaction, with the result load (planned once per
    connection where a walk is not due: the size decided that already), or, for a subject
    past `VECTOR_BESIDE_FROM`, on another connection while the keyword list is still being
    read, and the results are loaded after both. Otherwise all of it is one transaction,
    every statement planned for its subject.
    """
    request = stored(tenant_id, request)
    if request.as_of is not None:
        vector = embedding.result() if isinstance(embedding, Future) else embedding
        return as_of.recall(tenant_id, request, min(request.as_of, utcnow()), vector)
    if isinstance(embedding, Future):
        with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
            pending = _send_lexical(conn, tenant_id, request)
            beside = _vector_list_beside(tenant_id, request, pending.size, embedding)
            early = pending.result()
        if beside is not None:
            found = candidates.Lists(vector=beside.result(), keyword=early.keyword)
            with db.read_pipeline(tenant_id) as conn:
                return results(conn, request=request, found=found, retracted=early.retractions,
                               clock=early.clock)
        vector = embedding.result()
        # A subject whose size was read is one whose vector list the database sends.
        with db.read_pipeline(tenant_id, settings=None if early.size is None
                              else candidates.walk_settings()) as conn:
            return _finish(conn, request, early, vector)
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        lexical = _send_lexical(conn, tenant_id, request).result()
        return _finish(conn, request, lexical, embedding)


# From this many live memories, a subject's vector list goes out on a connection of its own
# once the query's vector is there, while its keyword list is still being read, rather than
# after it: at 50,000 on the benchmark the keyword list takes 20–60 ms and the vector list
# ≈ 25, one after the other. Smaller subjects gain little: in-process, the two ways measured
# the same at 600 and 1,000 memories, and side by side was 0.9 and 2.7 ms faster at p50 at
# 2,000 and 5,000, where a second connection is taken for every recall.
VECTOR_BESIDE_FROM = 5_000
# Threads that read vector lists beside keyword lists. A recall that finds them all busy
# waits for one, about as long as it would have waited for its keyword list before.
_vector_lists = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lethe-vector-list")


def _vector_list_beside(
    tenant_id: uuid.UUID, request: RecallRequest, size: candidates.SubjectSize | None,
    embedding: Future[list[float]],
) -> Future[list[tuple[uuid.UUID, float]]] | None:
    """A large subject's vector list, read on another connection as soon as the vector is
    there (its transaction starts only then); None where there is no keyword list to read
    beside it, or the subject is below `VECTOR_BESIDE_FROM` or was not counted."""
    if request.mode is RecallMode.vector or size is None or size.memories < VECTOR_BESIDE_FROM:
        return None

    def read() -> list[tuple[uuid.UUID, float]]:
        vector = embedding.result()
        with db.read_pipeline(tenant_id, settings=candidates.walk_settings()) as conn:
            return _vector_list(conn, request, vector, size)

    # In this recall's context: on the server it chose (app/core/replicas.py).
    return _vector_lists.submit(contextvars.copy_context().run, read)


def _finish(
    conn: psycopg.Connection[Any], request: RecallRequest, lexical: Lexical,
    embedding: Sequence[float] | None,
) -> RecallResponse:
    """Rank the subject's vectors read beforehand, or send the vector list and await it; then
    load the results."""
    found = _lists(conn, request, lexical, embedding)
    return results(conn, request=request, found=found, retracted=lexical.retractions,
                   clock=lexical.clock)


def _lists(
    conn: psycopg.Connection[Any], request: RecallRequest, lexical: Lexical,
    embedding: Sequence[float] | None,
) -> candidates.Lists:
    vector = None
    if request.mode is not RecallMode.keyword:
        assert embedding is not None, "vector recall needs the query embedding"
        n = candidate_count(request.limit)
        vector = (lexical.rows.nearest(embedding, n) if lexical.rows is not None
                  else _vector_list(conn, request, embedding, lexical.size))
    return candidates.Lists(vector=vector, keyword=lexical.keyword)


def candidate_lists(
    tenant_id: uuid.UUID, request: RecallRequest, embedding: Sequence[float]
) -> candidates.Lists:
    """The candidate lists ``request``'s recall fuses, with their scores, read as `recall`
    reads them in one transaction (for evaluating fusions: `bench/dialogue_bench.py`)."""
    request = stored(tenant_id, request)
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        lexical = _send_lexical(conn, tenant_id, request).result()
        return _lists(conn, request, lexical, embedding)


def stored(tenant_id: uuid.UUID, request: RecallRequest) -> RecallRequest:
    """The request with its subject as memories store it (the one place it enters SQL)."""
    return request.model_copy(update={"subject": digests.subject_digest(tenant_id,
                                                                       request.subject)})


def _vector_list(
    conn: psycopg.Connection[Any], request: RecallRequest, embedding: Sequence[float],
    size: candidates.SubjectSize | None,
) -> list[tuple[uuid.UUID, float]]:
    """The database's vector list for the subject (sorted, or walked as ``size`` says)."""
    found = candidates.send(conn, subject=request.subject, states=states_for(request),
                            n=candidate_count(request.limit), embedding=embedding,
                            size=size).result().vector
    assert found is not None, "a vector list was asked for"
    return found


@dataclass(frozen=True)
class Lexical:
    """What a recall reads without the query vector."""

    keyword: list[tuple[uuid.UUID, float]] | None  # None: not asked (vector mode)
    retractions: list[RetractionPublic]
    clock: working.Clock
    size: candidates.SubjectSize | None  # None: not read (keyword mode, or a small subject)
    rows: small_subjects.SubjectRows | None  # a small subject, to rank here; else None


@dataclass(frozen=True)
class PendingLexical:
    """The reads of a `Lexical` sent; a larger subject's size already there, its keyword
    list maybe still being read."""

    tenant_id: uuid.UUID
    subject: str
    retractions: psycopg.Cursor[Any]
    settings: psycopg.Cursor[Any]
    size: candidates.SubjectSize | None
    rows: small_subjects.SubjectRows | None
    keyword: candidates.PendingLists | list[tuple[uuid.UUID, float]] | None

    def result(self) -> Lexical:
        keyword = self.keyword
        if isinstance(keyword, candidates.PendingLists):
            keyword = keyword.result().keyword
        return Lexical(
            keyword=keyword,
            retractions=retractions.shown(self.retractions, tenant_id=self.tenant_id,
                                          subject=self.subject),
            clock=working.clock(self.settings), size=self.size, rows=self.rows)


def _send_lexical(
    conn: psycopg.Connection[Any], tenant_id: uuid.UUID, request: RecallRequest
) -> PendingLexical:
    """Send the retractions, and the keyword list (unless in vector mode). With a vector
    list to come, a small subject is read whole and its keyword list ranked here; a larger
    subject's size is read next (fetching an answer in a pipeline awaits every statement sent
    before it, so the size goes out alone), then its keyword list is sent, while the query
    embeds (a small subject's recall never counts it)."""
    states = states_for(request)
    # The query's terms hashed under the subject's key: its lexemes are read first, alone.
    terms = ([] if request.mode is RecallMode.vector else search_terms.query_terms(
        conn, tenant_id=tenant_id, subject=request.subject, query=request.query))
    retracted = retractions.recent(conn, tenant_id=tenant_id, subject=request.subject)
    settings = working.send(conn, tenant_id=tenant_id)
    rows = size = None
    if request.mode is not RecallMode.keyword:
        rows = small_subjects.send(conn, subject=request.subject, states=states,
                                   terms=terms).result()
        if rows is None:
            size = candidates.send_size(conn, subject=request.subject, states=states).result()
    n = candidate_count(request.limit)
    keyword: candidates.PendingLists | list[tuple[uuid.UUID, float]] | None = None
    if request.mode is not RecallMode.vector:
        keyword = (rows.keyword(n) if rows is not None else
                   bm25_lists.send(conn, subject=request.subject, states=states, n=n,
                                   terms=terms))
    return PendingLexical(tenant_id=tenant_id, subject=request.subject, retractions=retracted,
                          settings=settings, size=size, rows=rows, keyword=keyword)


def results(
    conn: psycopg.Connection[Any], *, request: RecallRequest, found: candidates.Lists,
    retracted: list[RetractionPublic], clock: working.Clock,
) -> RecallResponse:
    """The fused candidates still recallable, with their history, and the retractions; a
    working memory past its tenant's multiple of half-lives is not recallable."""
    states = states_for(request)
    fused = ranking.fuse(found.vector, found.keyword)
    answer: list[RecallResult] = []
    start = 0
    # A candidate whose memory left the recallable states since its list was read is dropped
    # by the load; the next ones take its place.
    while len(answer) < request.limit and start < len(fused):
        batch = fused[start: ranking.tie_end(fused, start + request.limit - len(answer))]
        start += len(batch)
        views, history = _load(conn, [memory_id for memory_id, _ in batch], states)
        answer += [
            RecallResult(memory=views[memory_id], score=ranking.shown(score),
                         flags=_flags(views[memory_id], clock),
                         history=history.get(memory_id, []))
            for memory_id, score in batch
            if memory_id in views and not clock.omitted(views[memory_id])
        ]
    return RecallResponse(results=ranking.order(answer)[: request.limit],
                          retractions=retracted)


# The results still in a recallable state and unexpired and, beside each, the deprecated memories it
# superseded (shown only as history, never on their own). One statement of two indexed
# lookups (an OR across both conditions would scan the table); the vector and search columns
# are not read.
_LOAD_SQL = f"""
    SELECT {memories.PUBLIC_COLUMNS}, false AS is_history
    FROM memory m JOIN memory_version v ON v.id = m.current_version_id
    WHERE m.id = ANY(%(ids)s) AND m.state = ANY(%(states)s) AND {memories.UNEXPIRED_SQL}
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
    opener = sealing.Opener()
    with conn.cursor(row_factory=dict_row) as cursor:
        for row in cursor.execute(_LOAD_SQL, {"ids": ids, "states": states,
                                                  "now": utcnow()}).fetchall():
            view = memories.public(row, opener)
            if view is None:  # erased (a restored copy's rows of a destroyed key)
                continue
            if row["is_history"]:
                assert view.superseded_by is not None
                history.setdefault(view.superseded_by, []).append(view)
            else:
                views[view.id] = view
    return views, history


def _flags(memory: MemoryPublic, clock: working.Clock) -> list[str]:
    flags = list(memory.flags)
    if memory.state is MemoryState.suspect and "suspect" not in flags:
        flags.insert(0, "suspect")
    if clock.stale(memory) and working.FLAG not in flags:
        flags.append(working.FLAG)
    return flags
