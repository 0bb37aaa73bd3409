"""A memory write whose text asks to forget is handled as forget-by-description instead.

Only when the tenant turned `detect_forget_requests` on; the deterministic detector decides
what counts as a request, and the request text itself is never stored.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse

from app.audit import service as audit
from app.core import db
from app.core.uow import UnitOfWork
from app.embeddings.runtime import embedder
from app.forgetting import describe
from app.memories.schemas import Effects, ForgetRequestHandled
from app.tenant_settings import service as tenant_settings
from app.tenants.service import Principal
from app.text.detector import detect_forget_request

MAX_TARGETS = 5


def handle(
    work: UnitOfWork, *, principal: Principal, subject: str, text: str
) -> JSONResponse | None:
    """Forget what ``text`` asks to forget, or None when it is not such a request."""
    request = detect_forget_request(text)
    if request is None or not detection_enabled(principal):
        return None
    outcome = describe.forget_by_description(
        work.open, tenant_id=principal.tenant_id, subject=subject, about=request.about[:200],
        delete=True, exclude_source=False, dry_run=False, max_targets=MAX_TARGETS,
        actor=audit.actor_for(principal), embed=embedder().embed,
    )
    body = ForgetRequestHandled(
        effects=Effects(retraction=describe.public(outcome).model_dump(mode="json"))
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=200)


def detection_enabled(principal: Principal) -> bool:
    # Read in a short transaction of its own: the work transaction must open only after
    # every embedding is done.
    with db.session_scope(principal.tenant_id) as session:
        return tenant_settings.get(session, tenant_id=principal.tenant_id).detect_forget_requests
