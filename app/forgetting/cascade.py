"""What forgetting a memory does beyond it: to what was derived from it.

Every path that forgets memories (forget, DELETE, forget by description, retention) calls
`forget.after_forget` with the memories it just tombstoned, in the same transaction; it
walks provenance here (`reach`), forgets what the setting says to forget with the one
tombstone (`forget.forget_one`), and settles the rest here (`settle`):

- the live memories derived directly from them become `suspect` with flag
  `source-forgotten`; with the tenant setting `forget.cascade` = `"forget"`, every memory
  derived from them, directly or through other derived memories, and not forgotten yet (live,
  deprecated or quarantined: each still holds what it derived), is forgotten instead;
- every artifact derived from them, directly or through derived memories, gets
  `erase_requested` and an `artifact.erase_requested` event;
- each forgotten memory is announced with a `memory.forgotten` event.

Provenance is walked through memories in any state and any subject of the tenant; a cycle
of derivations ends (`store.descendants`). Events carry IDs, kinds, refs and times, never
text or subjects. The derived memories are locked after the forget's own audit events, so
a write holding one of them while it waits for the tenant's audit chain can deadlock with
the forget; PostgreSQL picks a victim and the request runs again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from sqlmodel import Session

from app.artifacts import service as artifacts
from app.artifacts.models import Artifact
from app.core.models import utcnow
from app.memories import store
from app.memories.lifecycle import doubt
from app.memories.models import LIVE_STATES, Memory, MemoryState
from app.tenant_settings import service as tenant_settings
from app.webhooks import service as webhooks
from app.webhooks.models import WebhookEvent

SOURCE_FORGOTTEN = "source-forgotten"
LIVE = {state.value for state in LIVE_STATES}
FORGOTTEN = MemoryState.forgotten.value
Mode = Literal["flag", "forget"]


@dataclass(frozen=True)
class Cascade:
    suspected: list[uuid.UUID] = field(default_factory=list)
    forgotten: list[uuid.UUID] = field(default_factory=list)  # derived memories forgotten too
    artifacts: list[uuid.UUID] = field(default_factory=list)  # erasure requested now


@dataclass(frozen=True)
class Reach:
    """What a forget reaches: the live derived memories to doubt or forget (locked, in ID
    order) and the artifacts derived from it, directly or through derived memories."""

    mode: Mode
    memories: list[Memory]
    artifact_ids: list[uuid.UUID]


def reach(
    session: Session, *, tenant_id: uuid.UUID, memory_ids: Sequence[uuid.UUID],
    mode: Mode | None = None,
) -> Reach:
    """Walk provenance from ``memory_ids``; ``mode`` overrides the tenant's `forget.cascade`
    (an erasure forgets everything derived)."""
    start = set(memory_ids)
    mode = mode or tenant_settings.get(session, tenant_id=tenant_id).forget.cascade
    reached = store.descendants(session, tenant_id=tenant_id, memory_ids=list(start))
    if mode == "forget":
        targets = reached.get("memory", set()) - start
    else:
        targets = set(store.children(session, tenant_id=tenant_id, memory_ids=list(start),
                                     child_kind="memory")) - start
    locked = store.lock(session, tenant_id=tenant_id, ids=list(targets))
    # Forgetting takes every derived memory that still holds text (a deprecated or
    # quarantined one holds what it derived too); doubting is for live ones only.
    kept = (lambda m: m.state != FORGOTTEN) if mode == "forget" else (
        lambda m: m.state in LIVE)
    return Reach(mode=mode, memories=[locked[i] for i in sorted(locked) if kept(locked[i])],
                 artifact_ids=sorted(reached.get(artifacts.KIND, set())))


def settle(
    session: Session, *, tenant_id: uuid.UUID, memory_ids: Sequence[uuid.UUID], reached: Reach,
    derived_forgotten: Sequence[uuid.UUID], actor: str, held: Sequence[Memory] = (),
) -> Cascade:
    """After the caller forgot what ``reached`` said to forget (`forget.after_forget`): doubt
    the derived memories (mode `flag`; in mode `forget`, those a legal hold kept), ask for the
    artifacts' erasure, announce it all."""
    doubted = [memory for memory in held if memory.state in LIVE] if (
        reached.mode == "forget") else reached.memories
    suspected = [memory.id for memory in doubted
                 if doubt(session, memory, SOURCE_FORGOTTEN, reason=SOURCE_FORGOTTEN, actor=actor)]
    asked = artifacts.request_erasure(session, tenant_id=tenant_id,
                                      artifact_ids=reached.artifact_ids, actor=actor,
                                      reason=SOURCE_FORGOTTEN)
    announce(session, tenant_id=tenant_id, forgotten=[*memory_ids, *derived_forgotten],
             artifacts=asked)
    return Cascade(suspected=suspected, forgotten=list(derived_forgotten),
                   artifacts=[artifact.id for artifact in asked])


def announce(
    session: Session, *, tenant_id: uuid.UUID, forgotten: Sequence[uuid.UUID],
    artifacts: Sequence[Artifact],
) -> None:
    """`memory.forgotten` for each forgotten memory, `artifact.erase_requested` for each
    artifact whose erasure was just requested."""
    at = utcnow().isoformat()
    webhooks.emit_each(session, tenant_id=tenant_id, event=WebhookEvent.memory_forgotten,
                       payloads=[{"memory_id": str(memory_id), "forgotten_at": at}
                                 for memory_id in forgotten])
    if not artifacts:
        return
    sources = store.parents(session, tenant_id=tenant_id, child_kind="artifact",
                            child_ids=[artifact.id for artifact in artifacts])
    webhooks.emit_each(
        session, tenant_id=tenant_id, event=WebhookEvent.artifact_erase_requested,
        payloads=[{"artifact_id": str(a.id), "kind": a.kind, "ref": a.ref,
                   "derived_from": [str(m) for m in sources.get(a.id, [])],
                   "requested_at": at} for a in artifacts])
