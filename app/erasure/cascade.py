"""The erasure cascade, run by the worker (`tasks.py`) in short transactions:

1. `begin`: the request becomes `running` and its plan is written: every memory of the
   subject in every state, and every memory derived from them through provenance
   (transitively, in any subject; a cycle ends), one `erasure_target` row each.
2. `erase_batch`, again and again: the next batch of planned memories is locked, the ones
   an active legal hold covers are set aside (`held_by`), the rest are tombstoned through the
   one tombstone of the lifecycle (`lifecycle.tombstone`), the artifacts derived from them
   are asked for their erasure, and the batch's targets are marked done with the counts, all
   in one commit. A worker killed mid-batch loses the batch's transaction and nothing else:
   the redelivery starts from the first target not done, so every count is exact.
3. `finish`: the plan is walked once more (memories written meanwhile join it, and step 2
   goes on); then what is not a memory goes: retraction `about` phrases (the subject's, and
   any other subject's retraction of a memory in the plan), pending jobs and
   stored answers that show the subject or an erased memory, access exports, the subject's
   sources (excluded by keyed digest only), and the subject and source names on the
   tombstones. The request ends `on_hold` (a hold kept something), `awaiting_artifacts`
   (artifacts have not acknowledged) or `completed`; a vacuum of the touched tables follows.
4. `complete`: the subject's data key is destroyed in the key store, so every copy of what
   was sealed under it (pages, WAL, replicas, backups) becomes unreadable at once. Never
   while a hold keeps any of the subject's memories: an `on_hold` request keeps the key, and
   destroys it when it resumes and completes.

A released hold resumes `on_hold` requests (`resume`); the last acknowledged artifact settles
an `awaiting_artifacts` one (`settle`); the beat's sweep catches what a lost message missed.
Audit events and webhook payloads carry IDs, counts and digests, never the subject.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from sqlmodel import Session, col, select

from app.access import store as access_exports
from app.artifacts import service as artifacts
from app.audit import service as audit
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.erasure import service, states, store
from app.erasure.models import ErasureRequest, ErasureStatus
from app.forgetting import cascade as forget_cascade
from app.forgetting import retractions
from app.holds import store as holds
from app.idempotency import store as operations
from app.keys import subjects as subject_keys
from app.memories import lifecycle
from app.memories import store as memories
from app.memories.models import MemoryState
from app.sources import service as sources
from app.tenants import digests
from app.webhooks import service as webhooks
from app.webhooks.models import WebhookEvent

E = ErasureStatus
ACTOR = audit.system_actor("erasure")
REASON = "erasure"
VACUUM_TASK = "erasure.vacuum"
# The tables an erasure rewrites: vacuumed after it, so the dead row versions holding the
# subject's data are marked reusable (see docs/compliance.md for what that does not do).
TOUCHED_TABLES = ("memory", "memory_version", "provenance_edge", "retraction", "operation",
                  "access_export", "source_exclusion", "legal_hold", "artifact",
                  "erasure_request")


def begin(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID) -> bool:
    """Start (or resume) the cascade and write its plan; False when there is nothing to run
    (cancelled, awaiting approval, finished, or waiting for holds or artifacts)."""
    request = service.lock(session, tenant_id=tenant_id, request_id=request_id)
    status = E(request.status)
    if status in (E.pending, E.failed):
        states.move(session, request, E.running, actor=ACTOR)
    elif status is not E.running:
        return False
    plan(session, request)
    return True


def plan(session: Session, request: ErasureRequest) -> int:
    """Add to the plan the subject's memories and everything derived from them; returns
    how many were not planned yet."""
    if request.subject is None:
        return 0
    own = memories.ids_of_subject(session, tenant_id=request.tenant_id, subject=request.subject)
    reached = memories.descendants(session, tenant_id=request.tenant_id, memory_ids=own)
    derived = sorted(reached.get("memory", set()) - set(own))
    new = store.plan(session, tenant_id=request.tenant_id, request_id=request.id, own=own,
                     derived=derived)
    _progress(session, request)
    return new


def erase_batch(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID,
                size: int) -> int:
    """Erase the next ``size`` planned memories (held ones set aside) in this transaction;
    returns how many targets it settled (0: nothing left to do now)."""
    request = service.lock(session, tenant_id=tenant_id, request_id=request_id)
    if request.status != E.running:
        return 0
    batch = store.next_batch(session, request_id=request.id, limit=size)
    if not batch:
        return 0
    derived = dict(batch)
    locked = memories.lock(session, tenant_id=tenant_id, ids=list(derived))
    # A hold keeps content; a memory already forgotten has none left to keep, so a hold
    # covering only its tombstone does not stop the request (nor leave it `on_hold`).
    held = {memory_id: hold_id for memory_id, hold_id
            in memories.held_by(session, tenant_id=tenant_id, ids=list(derived)).items()
            if memory_id in locked and locked[memory_id].state != MemoryState.forgotten}
    erase = [locked[i] for i in sorted(locked)
             if i not in held and locked[i].state != MemoryState.forgotten]
    erased = [memory.id for memory in erase]
    tombstoned = lifecycle.tombstone(session, erase, reason=REASON, actor=ACTOR)
    reached = memories.descendants(session, tenant_id=tenant_id, memory_ids=erased)
    asked = artifacts.request_erasure(
        session, tenant_id=tenant_id, artifact_ids=sorted(reached.get(artifacts.KIND, set())),
        actor=ACTOR, reason=REASON, erasure_request_id=request.id)
    forget_cascade.announce(session, tenant_id=tenant_id, forgotten=erased, artifacts=asked)

    counts = dict(request.counts)
    seq = counts.get("erased_seq", 0)
    seqs: dict[uuid.UUID, int | None] = {}
    for memory_id in erased:
        seq += 1
        seqs[memory_id] = seq
    seqs.update({memory_id: None for memory_id in derived
                 if memory_id not in held and memory_id not in seqs})  # tombstones, gone rows
    store.mark_done(session, request_id=request.id, seqs=seqs)
    store.mark_held(session, request_id=request.id, holds=held)
    _remember_held(request, held)
    own_erased = sum(1 for memory_id in erased if not derived[memory_id])
    counts.update(
        erased_seq=seq, memories=counts.get("memories", 0) + own_erased,
        derived_memories=counts.get("derived_memories", 0) + len(erased) - own_erased,
        versions=counts.get("versions", 0) + tombstoned.versions,
        idempotency_records=counts.get("idempotency_records", 0) + tombstoned.answers,
        artifacts=counts.get("artifacts", 0) + len(asked))
    request.counts = counts
    _progress(session, request)
    return len(batch)


def finish(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID) -> str:
    """After the batches: "again" when the plan grew or targets are left (the caller runs
    more batches), else erase the rest and settle the status; returns it."""
    request = service.lock(session, tenant_id=tenant_id, request_id=request_id)
    if request.status != E.running:
        return request.status
    if plan(session, request) or store.counts(session, request_id=request.id)["left"]:
        return "again"
    erase_rest(session, request)
    if store.counts(session, request_id=request.id)["held"]:
        states.move(session, request, E.on_hold, actor=ACTOR)
    elif artifacts.awaited_by(session, tenant_id=tenant_id, erasure_request_id=request.id):
        states.move(session, request, E.awaiting_artifacts, actor=ACTOR)
    else:
        complete(session, request)
    enqueue_job(VACUUM_TASK, request.id, tenant_id)
    return request.status


def erase_rest(session: Session, request: ErasureRequest) -> None:
    """What is not a memory (idempotent: a rerun finds nothing more to change)."""
    subject = request.subject
    if subject is None:
        return
    tenant_id = request.tenant_id
    own = store.done(session, request_id=request.id, own_only=True)
    every = store.done(session, request_id=request.id, own_only=False)
    marker = digests.marker(request.subject_digest)
    # Memories store their sources as the digests exclusions name them by.
    hashed = {source: source for source in memories.sources_of(
        session, tenant_id=tenant_id, ids=own) if not source.startswith(digests.MARKER)}
    counts = dict(request.counts)
    counts["source_exclusions"] = counts.get("source_exclusions", 0) + sources.exclude_digests(
        session, tenant_id=tenant_id, hashed=set(hashed.values()), reason=REASON, actor=ACTOR)
    counts["retractions"] = counts.get("retractions", 0) + retractions.erase_subject(
        session, tenant_id=tenant_id, subject=subject, marker=marker
    ) + retractions.erase_about_of(session, tenant_id=tenant_id, memory_ids=every)
    failed, redacted = operations.erase_mentions(
        session, needle=json.dumps(service.subject_of(request) or subject, ensure_ascii=False),
        key_id=subject_keys.current_key_id(tenant_id, subject), memory_ids=every)
    counts["operations"] = counts.get("operations", 0) + failed
    counts["idempotency_records"] = counts.get("idempotency_records", 0) + redacted
    counts["access_exports"] = counts.get("access_exports", 0) + access_exports.purge_subject(
        session, tenant_id=tenant_id, subject=subject)
    memories.anonymize(session, tenant_id=tenant_id, ids=own, subject_marker=marker,
                       source_markers={p: digests.marker(h) for p, h in hashed.items()})
    request.counts = counts
    session.add(request)
    session.flush()


def complete(session: Session, request: ErasureRequest) -> None:
    """Completed: the subject's data key is destroyed, the released holds that named the
    subject lose its name, the request keeps only the digest, and `erasure.completed` is
    announced."""
    if request.subject is not None:
        _destroy_data_key(session, request, request.subject)
        own = store.done(session, request_id=request.id, own_only=True)
        # The tombstones' sources are markers by now; their edges and exclusions name the
        # digests the holds do.
        cited = memories.sources_of(session, tenant_id=request.tenant_id, ids=own)
        hashed = {source.removeprefix(digests.MARKER) for source in cited}
        holds.anonymize_released(
            session, tenant_id=request.tenant_id, subject=request.subject,
            subject_marker=digests.marker(request.subject_digest),
            source_markers={h: digests.marker(h) for h in hashed})
    states.move(session, request, E.completed, actor=ACTOR)
    webhooks.emit_each(session, tenant_id=request.tenant_id, event=WebhookEvent.erasure_completed,
                       payloads=[{"erasure_request_id": str(request.id),
                                  "subject_digest": request.subject_digest,
                                  "completed_at": (request.completed_at
                                                   or utcnow()).isoformat()}])


def _destroy_data_key(session: Session, request: ErasureRequest, subject: str) -> None:
    """Destroy the subject's data key, recording its ID and time on the request (the
    receipt's `data_key`). Before the status moves: the plain subject that names the key is
    dropped with it, and a crash after the destruction reruns this harmlessly (destroying
    again answers the first time)."""
    tenant_id = request.tenant_id
    # The plan's holds already stopped the request short of here; what is left is a memory
    # written while artifacts were acknowledging, which the plan never saw. If a hold keeps
    # one, its content must stay readable: the key stays and the receipt says so.
    written_since = [memory_id for memory_id, memory in memories.lock(
        session, tenant_id=tenant_id,
        ids=memories.ids_of_subject(session, tenant_id=tenant_id, subject=subject)).items()
        if memory.state != MemoryState.forgotten]
    if memories.held_by(session, tenant_id=tenant_id, ids=written_since):
        request.data_key_id = subject_keys.current_key_id(tenant_id, subject)
    else:
        request.data_key_id, request.key_destroyed_at = subject_keys.destroy_subject_key(
            tenant_id, subject)
    session.add(request)


def settle(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID) -> str:
    """An `awaiting_artifacts` request whose artifacts all acknowledged completes."""
    request = service.lock(session, tenant_id=tenant_id, request_id=request_id)
    if request.status == E.awaiting_artifacts and not artifacts.awaited_by(
            session, tenant_id=tenant_id, erasure_request_id=request.id):
        complete(session, request)
    return request.status


def resume(session: Session, *, tenant_id: uuid.UUID) -> list[uuid.UUID]:
    """Every `on_hold` request of the tenant runs again (a hold was released); returns
    them. One still covered is found held again and ends `on_hold` again."""
    resumed = []
    for request in _in_status(session, tenant_id, E.on_hold, lock=True):
        now = utcnow().isoformat()
        # New objects: a JSON column changed in place would not be written.
        request.held = [{**item, "released_at": item.get("released_at") or now}
                        for item in request.held]
        store.unhold(session, request_id=request.id)
        states.move(session, request, E.running, actor=ACTOR, reason="legal hold released")
        resumed.append(request.id)
    return resumed


def stalled(session: Session, *, tenant_id: uuid.UUID, before: timedelta
            ) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
    """For the sweep: requests pending or running untouched for ``before`` (their message
    was lost), and `awaiting_artifacts` ones (to settle)."""
    cutoff = utcnow() - before
    lost = [r.id for r in _in_status(session, tenant_id, E.pending, E.running)
            if (r.started_at or r.approved_at or r.created_at) < cutoff]
    awaiting = [r.id for r in _in_status(session, tenant_id, E.awaiting_artifacts)]
    return lost, awaiting


def fail(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID,
         exc: BaseException) -> None:
    """Failed, naming only the error's class (messages can quote the subject)."""
    request = service.lock(session, tenant_id=tenant_id, request_id=request_id)
    if request.status != E.running:
        return
    request.error = type(exc).__name__[:200]
    states.move(session, request, E.failed, actor=ACTOR, reason=request.error)


def vacuumed(session: Session, *, tenant_id: uuid.UUID, request_id: uuid.UUID) -> None:
    request = service.lock(session, tenant_id=tenant_id, request_id=request_id)
    request.vacuumed_at = utcnow()
    session.add(request)
    audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="erasure.vacuumed",
                 target_kind=states.TARGET, target_id=request.id,
                 details={"tables": len(TOUCHED_TABLES)})


def _progress(session: Session, request: ErasureRequest) -> None:
    found = store.counts(session, request_id=request.id)
    request.progress_total = found["total"]
    request.progress_done = found["done"] + found["held"]
    session.add(request)
    session.flush()


def _remember_held(request: ErasureRequest, held: dict[uuid.UUID, uuid.UUID]) -> None:
    if not held:
        return
    known = {(item["memory_id"], item["hold_id"]) for item in request.held
             if item.get("released_at") is None}
    now = utcnow().isoformat()
    items: list[dict[str, Any]] = list(request.held)
    for memory_id in sorted(held):
        pair = (str(memory_id), str(held[memory_id]))
        if pair not in known:
            items.append({"memory_id": pair[0], "hold_id": pair[1], "held_at": now,
                          "released_at": None})
    request.held = items


def _in_status(session: Session, tenant_id: uuid.UUID, *statuses: ErasureStatus,
               lock: bool = False) -> list[ErasureRequest]:
    statement = select(ErasureRequest).where(
        ErasureRequest.tenant_id == tenant_id,
        col(ErasureRequest.status).in_([status.value for status in statuses]),
    ).order_by(col(ErasureRequest.id))
    if lock:
        statement = statement.with_for_update().execution_options(populate_existing=True)
    return list(session.exec(statement).all())
