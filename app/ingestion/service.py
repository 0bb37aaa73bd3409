"""Ingestion in four steps: accept (the request), then start, prepare and apply (the task).

The request stores the validated body on its own operation row and answers 202; the task
marks the row running, prepares outside any transaction what `POST /v1/memories` prepares
(embeddings, the optional judge's verdicts) and the plans of the forget requests found in the
messages, then applies all of it and records the result in one transaction that also clears
the stored body. Services flush; the unit of work commits.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from app.audit import service as audit
from app.embeddings.runtime import embedder
from app.forgetting import describe
from app.idempotency import service as idempotency
from app.idempotency import store as operations
from app.idempotency.models import Operation
from app.ingestion.schemas import IngestBody, IngestMessage
from app.memories import bulk
from app.memories import service as memories
from app.tenant_settings import service as settings
from app.text.detector import detect_forget_request

APPLY_TASK = "ingestion.apply"
KIND = operations.job_kind("ingest", APPLY_TASK)
ACTOR = audit.system_actor("ingest")
FORGET_MAX_TARGETS = 5
FAILED_TYPE = "https://lethe.dev/problems/ingestion-failed"
# As `POST /v1/memories` caps a detected request's phrase (app/forgetting/forget_requests.py).
ABOUT_MAX = 200


def operation_id_for(tenant_id: uuid.UUID, key: str) -> uuid.UUID:
    """The operation an Idempotency-Key names: the same however late the key comes back."""
    return idempotency.derive_id(tenant_id, key, KIND)


def item_memory_id(operation_id: uuid.UUID, index: int) -> uuid.UUID:
    """The ID item ``index`` creates, so every redelivery targets the same row."""
    return uuid.uuid5(operation_id, f"item:{index}")


def accept(
    session: Session, *, claim: idempotency.Claim, api_key_id: uuid.UUID | None,
    body: IngestBody,
) -> Operation:
    """The queued operation holding ``body`` until the task applies it (sent after commit)."""
    return operations.accept_job(
        session, KIND, body.payload(), tenant_id=claim.tenant_id, method=claim.method,
        path=claim.path, claim=claim, api_key_id=api_key_id,
    )


@dataclass(frozen=True)
class Started:
    body: IngestBody
    detect_forget_requests: bool


def start(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> Started | None:
    """Mark the operation running and read its body; None when there is nothing to do."""
    operation = _locked(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None or operation.status in operations.FINISHED:
        return None
    payload = operations.payload_of(operation)
    if payload is None:
        return None
    body = IngestBody.model_validate(payload)
    operations.mark_running(session, operation)
    detect = settings.get(session, tenant_id=tenant_id).detect_forget_requests
    return Started(body=body, detect_forget_requests=detect)


@dataclass(frozen=True)
class Prepared:
    """The slow part of an ingestion, done holding no connection."""

    writes: list[memories.Prepared]
    # (message index, plan) of every forget request found in the user messages.
    forgets: list[tuple[int, describe.Plan]]


def prepare(*, tenant_id: uuid.UUID, started: Started) -> Prepared:
    """What `POST /v1/memories` prepares, for every item, and a plan per forget request."""
    body = started.body
    writes = memories.prepare(
        tenant_id=tenant_id, bodies=[body.memory_create(i) for i in range(len(body.memories))])
    found = forget_requests(body.messages) if started.detect_forget_requests else []
    forgets = [(request["message"], describe.prepare(
        tenant_id=tenant_id, subject=body.subject, about=request["about"], delete=True,
        exclude_source=False, dry_run=False, max_targets=FORGET_MAX_TARGETS, actor=ACTOR,
        embed=embedder().embed,
    )) for request in found]
    return Prepared(writes=writes, forgets=forgets)


def forget_requests(messages: list[IngestMessage]) -> list[dict[str, Any]]:
    """User messages that explicitly ask to forget something, as {"message", "about"}."""
    found: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role != "user":
            continue
        request = detect_forget_request(message.content)
        if request is not None:
            found.append({"message": index, "about": request.about[:ABOUT_MAX]})
    return found


@dataclass
class Outcome:
    memory_ids: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)


def apply(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    operation_id: uuid.UUID,
    body: IngestBody,
    prepared: Prepared,
) -> dict[str, Any] | None:
    """Apply the forget requests, then every item, and record the result; None when the
    operation is already finished (then nothing is changed)."""
    operation = _locked(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None or operation.status in operations.FINISHED:
        return None
    forgets = [{"message": message,
                **describe.public(describe.apply(session, plan)).model_dump(mode="json")}
               for message, plan in prepared.forgets]
    # Recorded before the items on purpose: from here this transaction holds the tenant's
    # audit chain lock, and an exclusion only commits under that lock. So the exclusions read
    # below are the ones memories.create() will read, and a refusal is audited in this
    # transaction — create() would audit it in a second one, which would wait on this one.
    audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="ingest.applied",
                 target_kind="operation", target_id=operation_id,
                 details={"memories": len(body.memories), "messages": len(body.messages)})
    if len(prepared.writes) != len(body.memories):
        raise ValueError("one prepared write per item is needed")
    outcome = Outcome()
    excluded = bulk.excluded(session, tenant_id=tenant_id, writes=prepared.writes)
    # The items are the submitting key's writes: their content events name it.
    writer = audit.key_actor(operation.api_key_id) if operation.api_key_id else ACTOR
    events: list[audit.Entry] = []
    for index, write in enumerate(prepared.writes):
        _apply_item(session, tenant_id=tenant_id, operation_id=operation_id, index=index,
                    write=write, outcome=outcome, excluded=excluded, actor=writer,
                    events=events)
    bulk.record(session, tenant_id=tenant_id, events=events)
    result = {
        "memory_ids": outcome.memory_ids,
        "forgotten": outcome.forgotten,
        "refused": outcome.refused,
        # What the user's requests forgot, by ID: the `about` phrases stay in the retraction
        # records, where an erasure finds them, not in operation results.
        "forget_requests": forgets,
    }
    # Memory text must not outlive its application in an operation record: the payload goes.
    operations.succeed(session, operation, result)
    return result


def fail(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, exc: BaseException
) -> bool:
    """Mark the operation failed, with a content-free error; False if it had finished."""
    operation = _locked(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None or operation.status in operations.FINISHED:
        return False
    # The class name only: messages of validation or database errors can quote memory text.
    operations.fail(session, operation, {
        "type": FAILED_TYPE,
        "detail": f"The ingestion failed ({type(exc).__name__}); none of its items were applied.",
    })
    return True


def _apply_item(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, index: int,
    write: memories.Prepared, outcome: Outcome, excluded: set[str], actor: str,
    events: list[audit.Entry],
) -> None:
    written = bulk.write_item(session, tenant_id=tenant_id,
                              memory_id=item_memory_id(operation_id, index), write=write,
                              actor=actor, attempted="ingest.item", excluded=excluded,
                              events=events)
    if isinstance(written, bulk.Refused):
        outcome.refused.append({"item": index, "type": written.error.slug,
                                "status": written.error.status})
    elif written.memory is None:
        outcome.memory_ids.append(str(written.forgotten_id))
        outcome.forgotten.append(str(written.forgotten_id))
    else:
        outcome.memory_ids.append(str(written.memory.id))


def _locked(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID
) -> Operation | None:
    return operations.lock_job(session, tenant_id=tenant_id, operation_id=operation_id,
                               kind=KIND)
