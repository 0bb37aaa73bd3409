from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from app.access import service
from app.access.schemas import AccessExportDocument, AccessRequestCreate
from app.api import route
from app.api.deps import AppReader, AppWriter, ClaimDep, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, PROBLEM_MEDIA_TYPE, problem_responses
from app.core.models import utcnow
from app.idempotency.schemas import LOCATION, OperationAccepted

router = APIRouter(
    prefix="/v1/access-requests", tags=["compliance"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)

EXPORT_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {
        "model": AccessExportDocument,
        "description": "The export, as a JSON file to save.",
        "headers": {"Content-Disposition": {
            "description": 'attachment; filename="lethe-access-export-<id>.json"',
            "schema": {"type": "string"}}},
    },
    404: {"description": "No such access request (another tenant's), or its export has "
                         "expired or was erased.",
          "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}},
    409: {"description": "`export-not-ready`: the export is still being made "
                         "(`operation_status` `queued` or `running`), or it failed "
                         "(`operation_status` `failed`).",
          "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}},
}


@router.post("", name="access_request", status_code=status.HTTP_202_ACCEPTED,
             responses={202: {"headers": LOCATION}})
def create_access_request(
    body: AccessRequestCreate, principal: AppWriter, session: SessionDep, claim: ClaimDep,
    response: Response,
) -> OperationAccepted:
    """Export everything held about a subject (GDPR Art. 15/20); poll the operation."""
    accepted = OperationAccepted.of(service.accept(
        session, tenant_id=principal.tenant_id, subject=body.subject,
        actor=audit.actor_for(principal), api_key_id=principal.key_id, claim=claim))
    response.headers["Location"] = accepted.location
    return accepted


@router.get("/{request_id}/export", response_class=Response, responses=EXPORT_RESPONSES)
def download_export(request_id: uuid.UUID, principal: AppReader,
                    session: SessionDep) -> Response:
    """Download an access request's export once its operation has succeeded."""
    content = service.download(session, tenant_id=principal.tenant_id, request_id=request_id,
                               now=utcnow())
    return Response(content, media_type="application/json", headers={
        "Content-Disposition": f'attachment; filename="lethe-access-export-{request_id}.json"'})
