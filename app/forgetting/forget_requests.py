"""`POST /v1/memories`: remember, unless the text asks to forget — then forget by description.

Only when the tenant turned `detect_forget_requests` on; the deterministic detector decides
what counts as a request, and the request text itself is never stored. Both branches prepare
their slow part (embedding, the judge, the forget plan) before the write's transaction opens.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlmodel import Session

from app.audit import service as audit
from app.core import uow
from app.embeddings.runtime import embedder
from app.forgetting import describe
from app.memories import service as memories
from app.memories.schemas import Effects, ForgetRequestHandled, MemoryCreate
from app.tenant_settings import service as tenant_settings
from app.text.detector import detect_forget_request

MAX_TARGETS = 5
ABOUT_MAX = 200


@dataclass(frozen=True)
class PreparedRemember:
    """A `POST /v1/memories` after its slow part: a forget request's plan, or the write's."""

    forget: describe.Plan | None = None
    write: memories.Prepared | None = None


def prepare(*, tenant_id: uuid.UUID, body: MemoryCreate, actor: str) -> PreparedRemember:
    """Detect a forget request and plan it, or prepare the write; before any transaction."""
    plan = forget_plan(tenant_id=tenant_id, subject=body.subject, text=body.text, actor=actor)
    if plan is not None:
        return PreparedRemember(forget=plan)
    [write] = memories.prepare(tenant_id=tenant_id, bodies=[body])
    return PreparedRemember(write=write)


def remember(
    session: Session, *, tenant_id: uuid.UUID, prepared: PreparedRemember, actor: str,
    memory_id: uuid.UUID | None, events: list[audit.Entry] | None = None,
) -> memories.Written | ForgetRequestHandled:
    """The write (``memory_id`` derived from its Idempotency-Key, if any), or what the forget
    request forgot (nothing is stored); ``events`` as `memories.create` takes it."""
    if prepared.forget is not None:
        outcome = describe.apply(session, prepared.forget)
        return ForgetRequestHandled(
            effects=Effects(retraction=describe.public(outcome).model_dump(mode="json")))
    write = prepared.write
    assert write is not None, "prepare() prepared one of the two"
    return memories.create(session, tenant_id=tenant_id, body=write.body,
                           embedding=write.embedding, actor=actor, memory_id=memory_id,
                           judged=write.judged, events=events)


def forget_plan(
    *, tenant_id: uuid.UUID, subject: str, text: str, actor: str
) -> describe.Plan | None:
    """The plan of the forget ``text`` asks for; None when it asks none, or detection is off."""
    request = detect_forget_request(text)
    if request is None or not detection_enabled(tenant_id):
        return None
    return plan(tenant_id=tenant_id, subject=subject, about=request.about, actor=actor)


def plan(*, tenant_id: uuid.UUID, subject: str, about: str, actor: str) -> describe.Plan:
    """The plan of a detected forget request: forget by description, what it is about."""
    return describe.prepare(
        tenant_id=tenant_id, subject=subject, about=about[:ABOUT_MAX], delete=True,
        exclude_source=False, dry_run=False, max_targets=MAX_TARGETS, actor=actor,
        embed=embedder().embed,
    )


def detection_enabled(tenant_id: uuid.UUID) -> bool:
    # Read in a short unit of its own: the write's unit opens only after every embedding.
    with uow.unit_of_work(tenant_id) as session:
        return tenant_settings.get(session, tenant_id=tenant_id).detect_forget_requests
