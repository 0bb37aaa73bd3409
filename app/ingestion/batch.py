"""`POST /v1/memories/batch`: up to 100 writes in one request, one embedding batch and one
transaction, each item answered in its slot as `POST /v1/memories` would answer it alone.

Prepared before the transaction opens: every item validated on its own (an invalid one is a
422 problem in its slot), the forget requests among them planned (when the tenant detects
them), and the other texts embedded in one call of the embedder's batch API. Applied in the
request's transaction, each item in a savepoint (`memories.bulk.write_item`), so a refused
item undoes only itself. With an Idempotency-Key, item ``i`` gets an ID derived from the key
(as ingestion's items do), so a redelivery after the record expired lands on the same rows.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlmodel import Session

from app.audit import service as audit
from app.core.errors import LetheError, problem_of, validation_problem
from app.forgetting import describe, forget_requests
from app.ingestion.service import item_memory_id
from app.memories import bulk
from app.memories import service as memories
from app.memories.schemas import Effects, MemoryCreate
from app.text.detector import detect_forget_request

KIND = "memory-batch"


@dataclass(frozen=True)
class Item:
    """One item after its slow part: its 422 problem, a forget request's plan, or a write."""

    problem: dict[str, Any] | None = None
    forget: describe.Plan | None = None
    write: memories.Prepared | None = None


def prepare(*, tenant_id: uuid.UUID, raw: list[Any], actor: str) -> list[Item]:
    """Validate, plan and embed every item, holding no connection."""
    bodies: dict[int, MemoryCreate] = {}
    items: dict[int, Item] = {}
    for index, data in enumerate(raw):
        try:
            bodies[index] = MemoryCreate.model_validate(data)
        except ValidationError as exc:
            items[index] = Item(problem=validation_problem(
                exc.errors(), prefix=("body", "memories", str(index))))
    requests = {index: found for index, body in bodies.items()
                if (found := detect_forget_request(body.text)) is not None}
    if requests and forget_requests.detection_enabled(tenant_id):
        for index, request in requests.items():
            body = bodies.pop(index)
            items[index] = Item(forget=forget_requests.plan(
                tenant_id=tenant_id, subject=body.subject, about=request.about, actor=actor))
    # The writes' texts go to the embedder together: one batch, however many items.
    writes = memories.prepare(tenant_id=tenant_id, bodies=list(bodies.values()))
    items.update((index, Item(write=write)) for index, write in zip(bodies, writes, strict=True))
    return [items[index] for index in range(len(raw))]


def apply(
    session: Session, *, tenant_id: uuid.UUID, items: list[Item], actor: str,
    batch_id: uuid.UUID | None,
) -> list[dict[str, Any]]:
    """Every item in request order, as `{"status", "memory"?, "effects"?, "error"?}`;
    ``batch_id`` (derived from the Idempotency-Key) derives the items' IDs."""
    excluded = bulk.excluded(session, tenant_id=tenant_id,
                             writes=[item.write for item in items if item.write is not None])
    events: list[audit.Entry] = []
    results = [_apply(session, tenant_id=tenant_id, item=item, actor=actor, excluded=excluded,
                      memory_id=item_memory_id(batch_id, index) if batch_id else None,
                      events=events)
               for index, item in enumerate(items)]
    bulk.record(session, tenant_id=tenant_id, events=events)
    return results


def named(results: list[dict[str, Any]]) -> list[uuid.UUID]:
    """The memories a batch's answer shows (a forget of one redacts the stored answer)."""
    return [uuid.UUID(result["memory"]["id"]) for result in results if "memory" in result]


def _apply(
    session: Session, *, tenant_id: uuid.UUID, item: Item, actor: str,
    memory_id: uuid.UUID | None, excluded: set[str], events: list[audit.Entry],
) -> dict[str, Any]:
    if item.problem is not None:
        return {"status": 422, "error": item.problem}
    if item.forget is not None:
        try:
            with session.begin_nested():
                outcome = describe.apply(session, item.forget)
        except LetheError as exc:
            return {"status": exc.status, "error": problem_of(exc)}
        effects = Effects(retraction=describe.public(outcome).model_dump(mode="json"))
        return {"status": 200, "effects": effects.model_dump(mode="json")}
    assert item.write is not None, "prepare() gave every valid item a write or a plan"
    written = bulk.write_item(session, tenant_id=tenant_id, memory_id=memory_id,
                              write=item.write, actor=actor, attempted="memory.batch",
                              excluded=excluded, events=events)
    if isinstance(written, bulk.Refused):
        return {"status": written.error.status, "error": problem_of(written.error)}
    if written.memory is None:
        return {"status": 201, "memory": {"id": str(written.forgotten_id), "state": "forgotten"}}
    memory = written.memory.model_dump(mode="json")
    effects = memory.pop("effects")
    return {"status": 201 if written.created else 200, "memory": memory, "effects": effects}
