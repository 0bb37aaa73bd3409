"""Ingestion in three steps: accept (the request), start and apply (the task).

The request stores the validated body on its own operation row and answers 202; the task
marks the row running, embeds outside any transaction, then applies every item and records
the result in one transaction that also clears the stored body. Services flush; callers
commit.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from app.audit import service as audit
from app.core.config import get_settings
from app.core.errors import LetheError
from app.core.models import utcnow
from app.forgetting import sources
from app.idempotency import service as idempotency
from app.idempotency.models import Operation, OperationStatus
from app.ingestion.schemas import IngestBody, IngestMessage
from app.memories import service as memories
from app.memories import store as memory_store
from app.memories.models import MemoryState
from app.tenant_settings import service as settings
from app.text.detector import detect_forget_request

KIND = "ingest"
ACTOR = audit.system_actor("ingest")
FINISHED = (OperationStatus.succeeded, OperationStatus.failed)
PENDING = (OperationStatus.queued, OperationStatus.running)
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
    """The queued operation holding ``body`` until the task applies it."""
    now = utcnow()
    operation = Operation(
        id=operation_id_for(claim.tenant_id, claim.key),
        tenant_id=claim.tenant_id,
        api_key_id=api_key_id,
        idempotency_key=claim.key,
        kind=KIND,
        request_method=claim.method,
        request_path=claim.path,
        request_digest=claim.digest,
        status=OperationStatus.queued,
        request_payload=body.payload(),
        created_at=now,
        updated_at=now,
        expires_at=now + timedelta(days=get_settings().idempotency_retention_days),
    )
    session.add(operation)
    session.flush()
    return operation


@dataclass(frozen=True)
class Started:
    body: IngestBody
    detect_forget_requests: bool


def start(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> Started | None:
    """Mark the operation running and read its body; None when there is nothing to do."""
    operation = _locked(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None or operation.status in FINISHED or operation.request_payload is None:
        return None
    body = IngestBody.model_validate(operation.request_payload)
    operation.status = OperationStatus.running
    operation.updated_at = utcnow()
    session.add(operation)
    session.flush()
    detect = settings.get(session, tenant_id=tenant_id).detect_forget_requests
    return Started(body=body, detect_forget_requests=detect)


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
    embeddings: list[list[float]],
    forgets: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """Apply every item and record the result; None when the operation is already finished."""
    operation = _locked(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None or operation.status in FINISHED:
        return None
    # Recorded first on purpose: from here this transaction holds the tenant's audit chain
    # lock, and an exclusion only commits under that lock. So the exclusions read below are
    # the ones memories.create() will read, and a refusal is audited in this transaction —
    # create() would audit it in a second transaction, which would wait forever on this one.
    audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="ingest.applied",
                 target_kind="operation", target_id=operation_id,
                 details={"memories": len(body.memories), "messages": len(body.messages)})
    if len(embeddings) != len(body.memories):
        raise ValueError("one embedding per item is needed")
    outcome = Outcome()
    for index, embedding in enumerate(embeddings):
        _apply_item(session, tenant_id=tenant_id, operation_id=operation_id, body=body,
                    index=index, embedding=embedding, outcome=outcome)
    result = {
        "memory_ids": outcome.memory_ids,
        "forgotten": outcome.forgotten,
        "refused": outcome.refused,
        # What the user's requests forgot, by ID: the `about` phrases stay in the retraction
        # records, where an erasure finds them, not in operation results.
        "forget_requests": forgets,
    }
    operation.status = OperationStatus.succeeded
    operation.result = result
    operation.error = None
    # Memory text must not outlive its application in an operation record.
    operation.request_payload = None
    operation.updated_at = utcnow()
    session.add(operation)
    session.flush()
    return result


def fail(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, exc: BaseException
) -> bool:
    """Mark the operation failed, with a content-free error; False if it had finished."""
    operation = _locked(session, tenant_id=tenant_id, operation_id=operation_id)
    if operation is None or operation.status in FINISHED:
        return False
    operation.status = OperationStatus.failed
    # The class name only: messages of validation or database errors can quote memory text.
    operation.error = {"type": FAILED_TYPE,
                       "detail": f"The ingestion failed ({type(exc).__name__}); "
                                 "none of its items were applied."}
    operation.request_payload = None
    operation.updated_at = utcnow()
    session.add(operation)
    session.flush()
    return True


def stale(session: Session, *, tenant_id: uuid.UUID, before: datetime) -> list[uuid.UUID]:
    """Ingestions still pending that nothing has touched since ``before``."""
    return list(session.exec(
        select(Operation.id).where(
            Operation.tenant_id == tenant_id, Operation.kind == KIND,
            col(Operation.status).in_(PENDING), col(Operation.updated_at) < before,
        )
    ).all())


def unfinished(session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID) -> bool:
    """Lock the operation for the final transaction; False when a delivery already finished it."""
    operation = _locked(session, tenant_id=tenant_id, operation_id=operation_id)
    return operation is not None and operation.status not in FINISHED


def _apply_item(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID, body: IngestBody,
    index: int, embedding: list[float], outcome: Outcome,
) -> None:
    memory_id = item_memory_id(operation_id, index)
    # An item already applied stays as it is — forgotten included — even if its source was
    # excluded since: a redelivery answers what the first run did and stores nothing.
    state = memory_store.state_of(session, tenant_id=tenant_id, memory_id=memory_id)
    if state is not None:
        outcome.memory_ids.append(str(memory_id))
        if state == MemoryState.forgotten:
            outcome.forgotten.append(str(memory_id))
        return
    create = body.memory_create(index)
    if sources.is_excluded(session, tenant_id=tenant_id, source=create.source):
        audit.record(session, tenant_id=tenant_id, actor=ACTOR, action="write.refused",
                     target_kind="source", target_id=create.source, reason="source excluded",
                     details={"attempted": "ingest.item"})
        outcome.refused.append({"item": index, "type": "source-excluded", "status": 409})
        return
    try:
        with session.begin_nested():
            written = memories.create(session, tenant_id=tenant_id, body=create,
                                      embedding=embedding, actor=ACTOR, memory_id=memory_id)
    except LetheError as exc:
        # A refusal of this item only (a stale supersedes, a revision mismatch …).
        outcome.refused.append({"item": index, "type": exc.slug, "status": exc.status})
        return
    if written.memory is None:
        outcome.memory_ids.append(str(written.forgotten_id))
        outcome.forgotten.append(str(written.forgotten_id))
    else:
        outcome.memory_ids.append(str(written.memory.id))


def _locked(
    session: Session, *, tenant_id: uuid.UUID, operation_id: uuid.UUID
) -> Operation | None:
    return session.exec(
        select(Operation)
        .where(Operation.id == operation_id, Operation.tenant_id == tenant_id,
               Operation.kind == KIND)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).first()
