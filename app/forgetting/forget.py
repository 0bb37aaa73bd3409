"""Forgetting one memory: the two switches of docs/api.md, tombstone, exclusion, retraction."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from app.forgetting import cascade, retractions
from app.forgetting.errors import ForgetsNothing, NoSourceToExclude
from app.memories import queries, store
from app.memories.errors import MemoryNotFound
from app.memories.lifecycle import destroy_content
from app.memories.models import Memory, MemoryState
from app.sources import service as sources


@dataclass(frozen=True)
class ForgetOutcome:
    id: uuid.UUID
    forgotten: bool
    excluded_source: str | None
    retraction_id: uuid.UUID | None
    already_forgotten: bool = False


def forget_memory(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    memory_id: uuid.UUID,
    delete: bool,
    exclude_source: bool,
    about: str | None,
    reason: str | None,
    actor: str,
    require_source: bool = True,
) -> ForgetOutcome:
    """Apply the switches; with ``require_source`` an exclude-only forget needs a source."""
    if not delete and not exclude_source:
        raise ForgetsNothing("Set `delete`, `exclude_source` or both.")
    memory = store.lock(session, tenant_id=tenant_id, ids=[memory_id]).get(memory_id)
    if memory is None:
        raise MemoryNotFound()
    excluded = None
    if exclude_source:
        if memory.source is None:
            if not delete and require_source:
                raise NoSourceToExclude("Nothing to exclude: the memory cites no source.")
        else:
            excluded = queries.source_of(memory)  # stored: its digest; this, the string
            sources.exclude(session, tenant_id=tenant_id, source=excluded or memory.source,
                            reason=reason, actor=actor)
    if memory.state == MemoryState.forgotten:
        return ForgetOutcome(memory.id, forgotten=True, excluded_source=excluded,
                             retraction_id=None, already_forgotten=True)
    forgotten_ids: list[uuid.UUID] = []
    if delete:
        forget_one(session, memory, reason=reason, actor=actor)
        forgotten_ids.append(memory.id)
        after_forget(session, tenant_id=tenant_id, memory_ids=forgotten_ids, actor=actor)
    retraction = retractions.record(session, tenant_id=tenant_id, subject=memory.subject,
                                    about=about, memory_ids=forgotten_ids)
    return ForgetOutcome(memory.id, forgotten=delete, excluded_source=excluded,
                         retraction_id=retraction.id)


def forget_this(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, actor: str
) -> ForgetOutcome:
    """The plain "forget this" (`DELETE /v1/memories/{id}` and the mem0-compatible delete):
    tombstoned and its source, if it cites one, excluded; again, still done."""
    return forget_memory(session, tenant_id=tenant_id, memory_id=memory_id, delete=True,
                         exclude_source=True, about=None, reason="delete", actor=actor,
                         require_source=False)


def forget_one(session: Session, memory: Memory, *, reason: str | None, actor: str) -> None:
    """Tombstone a locked memory: state `forgotten`, content purged, same transaction. The
    caller then cascades (`after_forget`), once for all the memories it forgot."""
    destroy_content(session, memory, reason=reason or "forget", actor=actor)


def after_forget(
    session: Session, *, tenant_id: uuid.UUID, memory_ids: Sequence[uuid.UUID], actor: str,
    mode: cascade.Mode | None = None,
) -> cascade.Cascade:
    """What forgetting ``memory_ids`` (tombstoned by the caller in this transaction) does to
    what was derived from them (`app/forgetting/cascade.py`); ``mode`` overrides the tenant's
    `forget.cascade`."""
    if not memory_ids:
        return cascade.Cascade()
    reached = cascade.reach(session, tenant_id=tenant_id, memory_ids=memory_ids, mode=mode)
    derived_forgotten: list[uuid.UUID] = []
    held: list[Memory] = []
    if reached.mode == "forget":
        # Holds win: a held derived memory keeps its content and is only doubted.
        holds = store.held_by(session, tenant_id=tenant_id,
                              ids=[memory.id for memory in reached.memories])
        for memory in reached.memories:
            if memory.id in holds:
                held.append(memory)
                continue
            forget_one(session, memory, reason=cascade.SOURCE_FORGOTTEN, actor=actor)
            derived_forgotten.append(memory.id)
    return cascade.settle(session, tenant_id=tenant_id, memory_ids=memory_ids, reached=reached,
                          derived_forgotten=derived_forgotten, held=held, actor=actor)
