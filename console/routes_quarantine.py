"""The quarantine queue: why and since when each memory waits; release or forget, one or many."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Form, Query, Request, status
from fastapi.responses import HTMLResponse, Response

from app.audit import service as audit
from app.core import uow
from app.core.errors import LetheError
from app.core.models import utcnow
from app.forgetting import revalidation as ladder
from app.forgetting.forget import forget_memory
from app.memories import queries
from app.memories.errors import InvalidCursor
from app.memories.models import MemoryState
from app.memories.schemas import MemoryPublic
from console import actors, auth
from console.deps import CsrfDep, OfficerDep, ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 50
MAX_SELECTED = PAGE_SIZE
QUARANTINED = MemoryState.quarantined.value


@dataclass(frozen=True)
class Waiting:
    memory: MemoryPublic
    reason: str | None
    since: datetime | None
    actor: str | None


@dataclass(frozen=True)
class Outcome:
    memory_id: uuid.UUID
    done: bool
    detail: str


def _queue(tenant_id: uuid.UUID, cursor: str | None
           ) -> tuple[list[Waiting], str | None, dict[str, str]]:
    with uow.unit_of_work(tenant_id) as session:
        found = queries.page(session, tenant_id=tenant_id, limit=PAGE_SIZE, cursor=cursor,
                             filters=queries.Filters(state=MemoryState.quarantined))
        events = audit.about_targets(session, tenant_id=tenant_id, target_kind="memory",
                                     target_ids=[str(m.id) for m in found.data])
        # The reason, time and actor of the move into quarantine are the audit chain's, the
        # one record.
        entered = {event.target_id: event for event in events
                   if event.to_state == QUARANTINED}
        names = actors.resolve(session, tenant_id=tenant_id,
                               actors=[event.actor for event in entered.values()])
    rows = [Waiting(memory=m, reason=getattr(entered.get(str(m.id)), "reason", None),
                    since=getattr(entered.get(str(m.id)), "created_at", None),
                    actor=getattr(entered.get(str(m.id)), "actor", None))
            for m in found.data]
    return rows, found.next_cursor, names


def _render(request: Request, viewer: auth.Viewer, *, cursor: str | None = None,
            outcomes: list[Outcome] | None = None, error: str | None = None,
            code: int = status.HTTP_200_OK) -> Response:
    names: dict[str, str] = {}
    try:
        rows, next_cursor, names = _queue(viewer.tenant_id, cursor)
    except InvalidCursor as refused:
        rows, next_cursor, error = [], None, refused.detail
        code = status.HTTP_422_UNPROCESSABLE_CONTENT
    return templates.TemplateResponse(request, "quarantine.html", {
        "viewer": viewer, "rows": rows, "next_cursor": next_cursor, "now": utcnow(),
        "outcomes": outcomes or [], "error": error, actors.CONTEXT_KEY: names,
    }, status_code=code)


@router.get("/quarantine", name="console_quarantine", response_class=HTMLResponse)
def queue(request: Request, viewer: ViewerDep,
          cursor: Annotated[str, Query(max_length=512)] = "") -> Response:
    """The quarantined memories, oldest first, with the reason and age of each."""
    return _render(request, viewer, cursor=cursor or None)


@router.post("/quarantine", name="console_quarantine_decide", response_class=HTMLResponse,
             dependencies=[CsrfDep])
def decide(
    request: Request, officer: OfficerDep,
    action: Annotated[Literal["release", "forget"], Form()],
    reason: Annotated[str, Form(max_length=500)] = "",
    memory_id: Annotated[list[uuid.UUID] | None, Form()] = None,
    exclude_source: Annotated[bool, Form()] = False,
) -> Response:
    """Release the chosen memories to active, or forget them, with a reason (audited)."""
    chosen = sorted(set(memory_id or []))
    why = reason.strip()
    if not chosen or len(chosen) > MAX_SELECTED or not why:
        error = ("Nothing was chosen, so nothing was changed: tick the memories to "
                 f"{action} first." if not chosen
                 else "Give a reason: it goes into the audit log." if not why
                 else f"Choose at most {MAX_SELECTED} memories at once.")
        return _render(request, officer, error=error, code=status.HTTP_422_UNPROCESSABLE_CONTENT)
    outcomes = [_apply(officer, one, action=action, reason=why, exclude_source=exclude_source)
                for one in chosen]
    return _render(request, officer, outcomes=outcomes)


def _apply(officer: auth.Viewer, memory_id: uuid.UUID, *, action: str, reason: str,
           exclude_source: bool) -> Outcome:
    # One transaction per memory: a held or already-moved memory refuses alone, the rest go on.
    tenant_id = officer.tenant_id
    actor = officer.actor
    try:
        with uow.unit_of_work(tenant_id) as session:
            state = queries.get(session, tenant_id=tenant_id, memory_id=memory_id).state
            if state is not MemoryState.quarantined:
                return Outcome(memory_id, False, f"not quarantined (now {state.value})")
            if action == "release":
                ladder.move(session, tenant_id=tenant_id, memory_id=memory_id, if_match=None,
                            to_state=MemoryState.active, reason=reason, actor=actor)
                return Outcome(memory_id, True, "released to active")
            forget_memory(session, tenant_id=tenant_id, memory_id=memory_id, delete=True,
                          exclude_source=exclude_source, about=None, reason=reason,
                          actor=actor, require_source=False)
            return Outcome(memory_id, True, "forgotten")
    except LetheError as refused:
        return Outcome(memory_id, False, refused.detail)
