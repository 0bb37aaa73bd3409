"""Erasure requests: the list with due dates, filing, approving and cancelling, a progress view
that refreshes while the cascade runs, the receipt and its JSON download."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Form, Query, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from app.audit import service as audit
from app.audit.schemas import TrailEvent
from app.core import uow
from app.core.errors import LetheError
from app.erasure import service as erasures
from app.erasure import states
from app.erasure.errors import ErasureNotFound, ReceiptNotReady
from app.erasure.models import ErasureStatus
from app.erasure.schemas import ErasureRequestCreate, ErasureRequestPublic, Receipt
from app.receipts import keys, signing
from console import actors, auth
from console.deps import CsrfDep, OfficerDep, ViewerDep
from console.templating import templates

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 50
# While the cascade can move by itself, the detail page refreshes (htmx, or a meta refresh
# without JavaScript). A request waiting on a person (approval, a hold) does not.
MOVING = frozenset({ErasureStatus.pending, ErasureStatus.running,
                    ErasureStatus.awaiting_artifacts})
REFRESH_SECONDS = 2


def _not_found(request: Request, viewer: auth.Viewer) -> Response:
    return templates.TemplateResponse(request, "not_found.html",
                                      {"viewer": viewer, "what": "erasure request"},
                                      status_code=status.HTTP_404_NOT_FOUND)


def _status(value: str) -> ErasureStatus | None:
    try:
        return ErasureStatus(value)
    except ValueError:
        return None


def _render_list(request: Request, viewer: auth.Viewer, *, wanted: ErasureStatus | None,
                 cursor: str | None, subject: str = "", errors: dict[str, str] | None = None,
                 form: dict[str, str] | None = None, code: int = status.HTTP_200_OK
                 ) -> Response:
    with uow.unit_of_work(viewer.tenant_id) as session:
        # The service digests the subject with the tenant's key and matches the stored
        # digest exactly: completed requests, whose plain subject is gone, are found too.
        found = erasures.page(session, tenant_id=viewer.tenant_id, status=wanted,
                              subject=subject or None, limit=PAGE_SIZE, cursor=cursor)
    return templates.TemplateResponse(request, "erasures.html", {
        "viewer": viewer, "requests": found.data, "next_cursor": found.next_cursor,
        "status": wanted.value if wanted else "", "statuses": list(ErasureStatus),
        "searched_subject": subject,
        "errors": errors or {}, "form": form or {},
    }, status_code=code)


@router.get("/erasures", name="console_erasures", response_class=HTMLResponse)
def list_erasures(request: Request, viewer: ViewerDep,
                  status_: Annotated[str, Query(alias="status", max_length=40)] = "",
                  subject: Annotated[str, Query(max_length=255)] = "",
                  cursor: Annotated[str, Query(max_length=100)] = "") -> Response:
    """Erasure requests with status and due date, by status or subject; overdue ones
    marked."""
    return _render_list(request, viewer, wanted=_status(status_), cursor=cursor or None,
                        subject=subject.strip())


@router.post("/erasures", name="console_file_erasure", response_class=HTMLResponse,
             dependencies=[CsrfDep])
def file_erasure(
    request: Request, officer: OfficerDep, subject: Annotated[str, Form(max_length=2000)] = "",
    reason: Annotated[str, Form(max_length=2000)] = "",
    requested_by: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    """File an erasure for a data subject (audited); shows its progress."""
    form = {"subject": subject, "reason": reason, "requested_by": requested_by}
    try:
        body = ErasureRequestCreate(subject=subject.strip(), reason=reason.strip() or None,
                                    requested_by=requested_by.strip() or None)
    except ValidationError as invalid:
        errors = {str(problem["loc"][0]): _message(str(problem["loc"][0]))
                  for problem in invalid.errors() if problem["loc"]}
        return _render_list(request, officer, wanted=None, cursor=None, errors=errors,
                            form=form, code=status.HTTP_422_UNPROCESSABLE_CONTENT)
    with uow.unit_of_work(officer.tenant_id) as session:
        filed, _created = erasures.file(session, tenant_id=officer.tenant_id, body=body,
                                        actor=officer.actor)
    return RedirectResponse(request.url_for("console_erasure", request_id=filed.id).path,
                            status_code=status.HTTP_303_SEE_OTHER)


def _message(field: str) -> str:
    return {"subject": "Name the data subject (up to 255 characters).",
            "reason": "A reason is at most 500 characters.",
            "requested_by": "At most 200 characters."}.get(field, "Not valid.")


def _signature(receipt: Receipt | None) -> signing.Verdict | None:
    if receipt is None:
        return None
    return signing.check(receipt.model_dump(mode="json"), keys.signing_key().public_jwk)


@dataclass(frozen=True)
class Loaded:
    """An erasure request with who moved it when (its audit trail, actors resolved)."""

    erasure: ErasureRequestPublic
    trail: list[TrailEvent]
    names: dict[str, str]


def _detail_context(viewer: auth.Viewer, loaded: Loaded,
                    error: str | None = None) -> dict[str, object]:
    found = loaded.erasure
    return {"viewer": viewer, "erasure": found, "moving": found.status in MOVING,
            "refresh": REFRESH_SECONDS, "verdict": _signature(found.receipt), "error": error,
            "trail": loaded.trail, actors.CONTEXT_KEY: loaded.names}


def _load(viewer: auth.Viewer, request_id: uuid.UUID) -> Loaded | None:
    try:
        with uow.unit_of_work(viewer.tenant_id) as session:
            found = erasures.get(session, tenant_id=viewer.tenant_id, request_id=request_id)
            trail = audit.trail(session, tenant_id=viewer.tenant_id,
                                target_kind=states.TARGET, target_id=request_id)
            names = actors.resolve(session, tenant_id=viewer.tenant_id,
                                   actors=[event.actor for event in trail])
    except ErasureNotFound:
        return None
    return Loaded(found, trail, names)


@router.get("/erasures/{request_id}", name="console_erasure", response_class=HTMLResponse)
def erasure(request: Request, request_id: uuid.UUID, viewer: ViewerDep) -> Response:
    """An erasure request: status, progress (refreshing while it runs), receipt."""
    found = _load(viewer, request_id)
    if found is None:
        return _not_found(request, viewer)
    return templates.TemplateResponse(request, "erasure.html", _detail_context(viewer, found))


@router.get("/erasures/{request_id}/status", name="console_erasure_status",
            response_class=HTMLResponse)
def erasure_status(request: Request, request_id: uuid.UUID, viewer: ViewerDep) -> Response:
    """The status part of the erasure page alone, for the page's polling."""
    found = _load(viewer, request_id)
    if found is None:
        return _not_found(request, viewer)
    return templates.TemplateResponse(request, "_erasure_status.html",
                                      _detail_context(viewer, found))


@router.post("/erasures/{request_id}/{decision}", name="console_decide_erasure",
             response_class=HTMLResponse, dependencies=[CsrfDep])
def decide(request: Request, request_id: uuid.UUID, decision: str,
           officer: OfficerDep) -> Response:
    """Approve or cancel an erasure request (audited)."""
    if decision not in ("approve", "cancel"):
        return _not_found(request, officer)
    act = erasures.approve if decision == "approve" else erasures.cancel
    try:
        with uow.unit_of_work(officer.tenant_id) as session:
            act(session, tenant_id=officer.tenant_id, request_id=request_id,
                actor=officer.actor)
    except ErasureNotFound:
        return _not_found(request, officer)
    except LetheError as refused:
        found = _load(officer, request_id)
        if found is None:
            return _not_found(request, officer)
        return templates.TemplateResponse(
            request, "erasure.html", _detail_context(officer, found, error=refused.detail),
            status_code=refused.status)
    return RedirectResponse(request.url_for("console_erasure", request_id=request_id).path,
                            status_code=status.HTTP_303_SEE_OTHER)


@router.get("/erasures/{request_id}/receipt.json", name="console_receipt_download")
def download_receipt(request: Request, request_id: uuid.UUID, viewer: ViewerDep) -> Response:
    """The signed receipt as a JSON file, exactly as the API serves it."""
    try:
        with uow.unit_of_work(viewer.tenant_id) as session:
            receipt = erasures.receipt_of(session, tenant_id=viewer.tenant_id,
                                          request_id=request_id)
    except ErasureNotFound:
        return _not_found(request, viewer)
    except ReceiptNotReady as refused:
        return Response(refused.detail, status_code=refused.status, media_type="text/plain")
    return Response(receipt.model_dump_json(indent=2), media_type="application/json",
                    headers={"Content-Disposition":
                             f'attachment; filename="erasure-receipt-{request_id}.json"'})
