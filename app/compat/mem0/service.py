"""mem0's operations, each done by the Lethe service that owns it: writes through the same
path as `POST /v1/memories` (forget-request detection included), reads through the memory
queries and recall, deletes through the one forget, "delete all" as an erasure request."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from sqlmodel import Session

from app.audit import service as audit
from app.compat.mem0 import translate
from app.compat.mem0.schemas import (
    Mem0Add,
    Mem0ErasureRequested,
    Mem0Event,
    Mem0Memory,
    Mem0RunClosed,
    Mem0Scope,
    Mem0Scored,
    Mem0Search,
    Mem0Update,
)
from app.core import replicas
from app.core.errors import InvalidRequest
from app.embeddings.runtime import embed_soon
from app.erasure import service as erasure
from app.erasure.schemas import ErasureRequestCreate
from app.forgetting import forget_requests, sessions
from app.forgetting.forget import forget_this
from app.memories import bulk, queries
from app.memories import service as memories
from app.memories.models import LIVE_STATES
from app.memories.schemas import ForgetRequestHandled, MemoryPatch
from app.recall import service as recall
from app.recall.schemas import RecallRequest

PAGE = 200
# Recall is asked for this many times the results when filters may drop some of them.
FILTER_FACTOR = 4
RECALL_MAX = 100
ERASURE_REASON = "mem0-compatible delete of all memories"


def prepare_add(*, tenant_id: uuid.UUID, body: Mem0Add, actor: str
                ) -> list[forget_requests.PreparedRemember]:
    """Each stored message prepared as `POST /v1/memories` prepares it (embedding, or the
    plan of the forget it asks for), before the write's transaction opens. A forget request
    is planned against what was stored before this request."""
    return [forget_requests.prepare(tenant_id=tenant_id, body=write, actor=actor)
            for write in translate.writes(body)]


def add(
    session: Session, *, tenant_id: uuid.UUID, prepared: Sequence[forget_requests.PreparedRemember],
    actor: str, derived_id: Callable[[int], uuid.UUID | None],
) -> list[Mem0Event]:
    """Apply the prepared writes in message order; ``derived_id(n)`` is the ID the n-th
    message's memory gets from the request's Idempotency-Key. Their audit events are appended
    together after the last write, as a bulk write's are."""
    events: list[Mem0Event] = []
    audited: list[audit.Entry] = []
    for index, one in enumerate(prepared):
        written = forget_requests.remember(session, tenant_id=tenant_id, prepared=one,
                                           actor=actor, memory_id=derived_id(index),
                                           events=audited)
        if isinstance(written, ForgetRequestHandled):
            events += translate.forgot(written)
        elif written.memory is None:
            # A redelivery of a write forgotten since: done before, nothing stored again.
            assert written.forgotten_id is not None
            events.append(Mem0Event(id=written.forgotten_id, memory=None, event="ADD"))
        else:
            events.append(translate.added(written.memory))
    bulk.record(session, tenant_id=tenant_id, events=audited)
    return events


def list_memories(session: Session, *, tenant_id: uuid.UUID, scope: Mem0Scope, limit: int
                  ) -> list[Mem0Memory]:
    """The scope's live memories, oldest first, at most ``limit``."""
    filters = queries.Filters(subject=translate.subject_of(scope))
    found: list[Mem0Memory] = []
    cursor: str | None = None
    while len(found) < limit:
        page = queries.page(session, tenant_id=tenant_id, filters=filters, limit=PAGE,
                            cursor=cursor)
        found += [translate.item(memory) for memory in page.data
                  if memory.state in LIVE_STATES
                  and translate.matches(memory, scope=scope, filters={})]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return found[:limit]


def search(*, tenant_id: uuid.UUID, body: Mem0Search) -> list[Mem0Scored]:
    """Recall for the scope, narrowed by agent and metadata filters."""
    filters = body.filters or {}
    narrowed = translate.agent_filter(body) is not None or body.run_id is not None or bool(filters)
    limit = min(body.limit * FILTER_FACTOR, RECALL_MAX) if narrowed else body.limit
    request = RecallRequest(subject=translate.subject_of(body), query=body.query, limit=limit)
    with replicas.reading(tenant_id):
        answer = recall.recall(tenant_id, request, embed_soon(body.query))
    return [translate.scored(result.memory, result.score) for result in answer.results
            if translate.matches(result.memory, scope=body, filters=filters)][:body.limit]


def prepare_update(body: Mem0Update) -> memories.PreparedPatch:
    """The new text embedded before the transaction opens."""
    return memories.prepare_patch(MemoryPatch(text=body.text))


def update(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, body: Mem0Update,
    prepared: memories.PreparedPatch, actor: str,
) -> None:
    """mem0 updates without a precondition: the revision read here is the one compared, so
    only an edit landing between the two statements is refused (412)."""
    current = queries.get(session, tenant_id=tenant_id, memory_id=memory_id)
    metadata = (translate.kept_metadata(current, body.metadata)
                if body.metadata is not None else None)
    memories.update(session, tenant_id=tenant_id, memory_id=memory_id,
                    if_match=f'"{current.revision}"',
                    patch=MemoryPatch(text=body.text, metadata=metadata),
                    embedding=prepared.embedding, actor=actor)


def delete(session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, actor: str) -> None:
    forget_this(session, tenant_id=tenant_id, memory_id=memory_id, actor=actor)


def close_run(session: Session, *, tenant_id: uuid.UUID, scope: Mem0Scope, actor: str
              ) -> Mem0RunClosed:
    """mem0's "delete a run's memories": the run closed, as `POST /v1/sessions/{session}/close`
    closes it (its working memories evicted, promoted and held ones kept)."""
    assert scope.run_id is not None
    closed = sessions.close(session, tenant_id=tenant_id, name=scope.run_id, actor=actor)
    return Mem0RunClosed(message="Run closed: its working memories are forgotten",
                         session=sessions.public(closed))


def delete_all(
    session: Session, *, tenant_id: uuid.UUID, scope: Mem0Scope, actor: str,
    request_id: uuid.UUID | None,
) -> tuple[Mem0ErasureRequested, bool]:
    """An erasure request for the scope's subject (True when new, False for the open one):
    everything about the subject goes, in the background, with a receipt."""
    if translate.agent_filter(scope) is not None:
        # mem0 would delete only that agent's memories of the user; an erasure is the whole
        # subject, so the narrower request is refused rather than widened.
        raise InvalidRequest("An erasure covers the whole subject: send user_id alone (or "
                             "agent_id alone for an agent's own memories).")
    filed, created = erasure.file(
        session, tenant_id=tenant_id, actor=actor, request_id=request_id,
        body=ErasureRequestCreate(subject=translate.subject_of(scope), reason=ERASURE_REASON,
                                  requested_by=None))
    message = ("Erasure requested: all memories of this subject are erased in the background"
               if created else "An erasure of this subject is already under way")
    return Mem0ErasureRequested(message=message, erasure_request=filed), created
