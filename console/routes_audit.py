"""The audit log: the tenant's chain, newest first, filtered, with its verification."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from app.audit import service as audit
from app.audit.errors import InvalidCursor
from app.core import uow
from console import actors, chain_status
from console.deps import ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 50
FILTER_FIELDS = ("actor", "action", "target", "since", "until")
TIME_HINT = "A date and time in UTC, such as 2026-12-01T09:30."


def _when(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


@router.get("/audit", name="audit_page", response_class=HTMLResponse)
def audit_page(
    request: Request,
    viewer: ViewerDep,
    actor: Annotated[str, Query(max_length=100)] = "",
    action: Annotated[str, Query(max_length=64)] = "",
    target: Annotated[str, Query(max_length=255)] = "",
    since: Annotated[str, Query(max_length=40)] = "",
    until: Annotated[str, Query(max_length=40)] = "",
    cursor: Annotated[str, Query(max_length=100)] = "",
    verify: Annotated[str, Query(max_length=10)] = "",
) -> Response:
    """Filter by actor, action (or its family, e.g. ``staff``), target ID and time."""
    values = {"actor": actor.strip(), "action": action.strip(), "target": target.strip(),
              "since": since.strip(), "until": until.strip()}
    errors: dict[str, str] = {}
    times: dict[str, datetime | None] = {}
    for name in ("since", "until"):
        try:
            times[name] = _when(values[name]) if values[name] else None
        except ValueError:
            errors[name] = TIME_HINT
            times[name] = None
    filters = audit.EventFilters(
        actor=values["actor"] or None, action_family=values["action"] or None,
        target_id=values["target"] or None, since=times["since"], until=times["until"],
    )
    page, chain, names = None, None, {}
    with uow.unit_of_work(viewer.tenant_id) as session:
        chain = chain_status.status(session, tenant_id=viewer.tenant_id,
                                    full=verify == "full")
        if not errors:
            try:
                page = audit.events(session, tenant_id=viewer.tenant_id, limit=PAGE_SIZE,
                                    cursor=cursor or None, filters=filters, newest_first=True)
            except InvalidCursor:
                errors["cursor"] = "That page link is out of date; start from the newest events."
        if page is not None:
            names = actors.resolve(session, tenant_id=viewer.tenant_id,
                                   actors=[event.actor for event in page.data])
    older = None
    if page is not None and page.next_cursor:
        query = {k: v for k, v in values.items() if v}
        older = f"{request.url.path}?{urlencode({**query, 'cursor': page.next_cursor})}"
    return templates.TemplateResponse(request, "audit.html", {
        "viewer": viewer, "values": values, "errors": errors, "page": page, "chain": chain,
        "older": older, "filtered": any(values.values()) or bool(cursor), actors.CONTEXT_KEY: names,
    })
