"""The dashboard: what an officer checks first."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.audit import service as audit
from app.core import uow
from app.erasure import service as erasures
from app.holds import service as holds
from app.memories import queries as memories
from app.memories.models import MemoryState
from console import chain_status, charts
from console.deps import ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)

CHART_DAYS = 30
OPEN_ERASURES_SHOWN = 10


@router.get("/", name="home", response_class=HTMLResponse)
def home(request: Request, viewer: ViewerDep) -> Response:
    """Counts per state, the quarantine queue, open erasures, holds, the audit chain and 30
    days of state changes."""
    with uow.unit_of_work(viewer.tenant_id) as session:
        counts = memories.counts_by_state(session, tenant_id=viewer.tenant_id)
        active_holds = holds.active_count(session, tenant_id=viewer.tenant_id)
        open_erasures, open_total = erasures.open_requests(
            session, tenant_id=viewer.tenant_id, limit=OPEN_ERASURES_SHOWN)
        chain = chain_status.status(session, tenant_id=viewer.tenant_id)
        series = audit.state_changes_per_day(session, tenant_id=viewer.tenant_id,
                                             days=CHART_DAYS)
    return templates.TemplateResponse(request, "home.html", {
        "viewer": viewer,
        "counts": counts,
        "states": list(MemoryState),
        "quarantined": counts[MemoryState.quarantined],
        "active_holds": active_holds,
        "open_erasures": open_erasures,
        "open_total": open_total,
        "chain": chain,
        "chart": charts.daily_bars(series),
        "chart_days": CHART_DAYS,
    })
