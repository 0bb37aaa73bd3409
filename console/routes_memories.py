"""Memory search and the lineage page of one memory."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request, status
from fastapi.responses import HTMLResponse, Response

from app.core import uow
from app.core.models import utcnow
from app.embeddings.runtime import embed_soon
from app.holds import service as holds
from app.memories import component, queries
from app.memories.errors import InvalidCursor, MemoryNotFound
from app.memories.models import MemoryState
from app.recall import service as recall
from app.recall.schemas import RecallRequest
from console import actors, lineage_view
from console.deps import ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 25
# Text search ranks one subject's live memories (recall); this many are ranked at most.
TEXT_RESULTS = 100
SEARCHABLE_STATES = [s for s in MemoryState if s is not MemoryState.forgotten]
# Recall reaches live memories only; the other states are listed, not ranked.
RANKED_STATES = {MemoryState.active, MemoryState.suspect}
Text = Annotated[str, Query(max_length=255)]
# The lineage graph shows this many nodes of the provenance component, or up to MAX_NODES
# when the officer asks for more.
GRAPH_NODES = 50
MAX_NODES = 200


def instant(value: str) -> datetime | None:
    """An "as of" time from a form: a `datetime-local` value (read as UTC) or RFC 3339 text;
    None when empty. Raises ValueError when it is neither; a time after now is now."""
    value = value.strip()
    if not value:
        return None
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return min(parsed, utcnow())


AS_OF_HINT = "As of must be a date and time, such as 2026-12-03T14:30 (UTC)."


def _state(value: str) -> MemoryState | None:
    try:
        state = MemoryState(value)
    except ValueError:
        return None
    return state if state in SEARCHABLE_STATES else None


@router.get("/memories", name="console_memories", response_class=HTMLResponse)
def search(
    request: Request, viewer: ViewerDep, subject: Text = "", q: Annotated[str, Query(
        max_length=2000)] = "", state: Text = "", cursor: Annotated[str, Query(
        max_length=512)] = "", page: Annotated[int, Query(ge=1, le=TEXT_RESULTS)] = 1,
    as_of: Annotated[str, Query(max_length=64)] = "",
) -> Response:
    """Search memories by subject, text and state; with "as of", as recall answered then."""
    subject, q = subject.strip(), q.strip()
    wanted = _state(state)
    try:
        then = instant(as_of)
    except ValueError:
        then = None
    context: dict[str, object] = {
        "viewer": viewer, "subject": subject, "q": q, "state": wanted.value if wanted else "",
        "states": SEARCHABLE_STATES, "results": [], "next_cursor": None, "notice": None,
        "scores": {}, "page": page, "more_pages": False, "searched": bool(subject or q or wanted),
        "as_of": as_of.strip(), "then": then,
    }
    code = status.HTTP_200_OK
    if as_of.strip() and then is None:
        context["notice"], code = AS_OF_HINT, status.HTTP_422_UNPROCESSABLE_CONTENT
    elif then is not None and not (q and subject):
        context["notice"] = ("A search as of a past time ranks one subject's memories as "
                             "recall did then: enter the subject and the text.")
    elif q and not subject:
        # Each subject's texts and search terms are sealed under its own key: words can be
        # looked for within one subject, never across all of them.
        context["notice"] = ("Texts are encrypted per subject, so text search looks within "
                             "one subject: enter the subject too (or list by subject and state).")
    elif q and wanted is not None and wanted not in RANKED_STATES:
        context["notice"] = ("Text search ranks active and suspect memories only; clear the "
                             "text to list the subject's " + wanted.value + " memories.")
    elif q:
        ranked = recall.recall(viewer.tenant_id, RecallRequest(
            subject=subject, query=q, limit=TEXT_RESULTS,
            include_suspect=wanted is not MemoryState.active, as_of=then), embed_soon(q))
        hits = [r for r in ranked.results if wanted is None or r.memory.state == wanted]
        start = (page - 1) * PAGE_SIZE
        context["results"] = [r.memory for r in hits[start:start + PAGE_SIZE]]
        context["scores"] = {r.memory.id: r.score for r in hits}
        context["more_pages"] = len(hits) > start + PAGE_SIZE
    elif context["searched"]:
        filters = queries.Filters(subject=subject or None, state=wanted)
        try:
            with uow.unit_of_work(viewer.tenant_id) as session:
                found = queries.page(session, tenant_id=viewer.tenant_id, filters=filters,
                                     limit=PAGE_SIZE, cursor=cursor or None)
            context["results"], context["next_cursor"] = found.data, found.next_cursor
        except InvalidCursor as refused:
            context["notice"], code = refused.detail, status.HTTP_422_UNPROCESSABLE_CONTENT
    return templates.TemplateResponse(request, "memories.html", context, status_code=code)


@router.get("/memories/{memory_id}", name="console_lineage", response_class=HTMLResponse)
def lineage(request: Request, memory_id: uuid.UUID, viewer: ViewerDep,
            nodes: Annotated[int, Query(ge=2, le=MAX_NODES)] = GRAPH_NODES,
            as_of: Annotated[str, Query(max_length=64)] = "") -> Response:
    """A memory's versions, diffs, supersession, provenance, flags, holds and audit trail;
    with "as of", its state, flags and versions as they stood then."""
    try:
        then = instant(as_of)
    except ValueError:
        then = None
    with uow.unit_of_work(viewer.tenant_id) as session:
        try:
            found = queries.lineage(session, tenant_id=viewer.tenant_id, memory_id=memory_id)
            memory = (queries.get(session, tenant_id=viewer.tenant_id, memory_id=memory_id)
                      if then is None else queries.get_then(
                          session, tenant_id=viewer.tenant_id, memory_id=memory_id, at=then))
            if then is not None:
                found = lineage_view.as_of(found, memory, then)
            authors = queries.version_authors(session, tenant_id=viewer.tenant_id,
                                              memory_id=memory_id)
        except MemoryNotFound:
            tomb = queries.tombstone(session, tenant_id=viewer.tenant_id, memory_id=memory_id)
            if tomb is None or then is not None:
                return templates.TemplateResponse(
                    request, "not_found.html", {"viewer": viewer, "what": "memory"},
                    status_code=status.HTTP_404_NOT_FOUND)
            names = actors.resolve(session, tenant_id=viewer.tenant_id, actors=[
                tomb.actor, *(event.actor for event in tomb.audit_events)])
            return templates.TemplateResponse(request, "tombstone.html", {
                "viewer": viewer, "tomb": tomb, actors.CONTEXT_KEY: names})
        hold_ids = holds.covering(session, tenant_id=viewer.tenant_id, memory_ids=[memory_id])
        covering = [holds.get(session, tenant_id=viewer.tenant_id, hold_id=hold_id)
                    for hold_id in sorted(set(hold_ids.values()))]
        around = component.component(session, tenant_id=viewer.tenant_id,
                                     memory_id=memory_id, max_nodes=nodes)
        names = actors.resolve(session, tenant_id=viewer.tenant_id, actors=[
            *(event.actor for event in found.audit_events), *authors.values(),
            *(hold.created_by for hold in covering)])
    return templates.TemplateResponse(request, "lineage.html", {
        "viewer": viewer, "memory": memory, "lineage": found, "holds": covering,
        actors.CONTEXT_KEY: names,
        "steps": lineage_view.timeline(found.versions, authors),
        "graph": lineage_view.graph(around), "component": around,
        "more_nodes": MAX_NODES if around.truncated and nodes < MAX_NODES else None,
        "then": then, "as_of": as_of.strip(),
        "as_of_notice": AS_OF_HINT if as_of.strip() and then is None else None,
    })
