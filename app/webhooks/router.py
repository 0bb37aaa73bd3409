from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from app.api import route
from app.api.deps import (
    ComplianceReader,
    ComplianceWriter,
    SessionDep,
    derived_id,
    not_replayed,
)
from app.audit import service as audit
from app.core.config import get_settings
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.webhooks import addresses, service
from app.webhooks.schemas import (
    DeliveryList,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookPublic,
)

router = APIRouter(
    prefix="/v1/webhooks", tags=["webhooks"], route_class=route.LetheRoute,
    responses=problem_responses(*COMMON_PROBLEMS),
)
CreatedId = Annotated[uuid.UUID | None, Depends(derived_id("webhook"))]


def _checked_url(body: WebhookCreate, principal: ComplianceWriter) -> addresses.Target:
    # Name resolution is slow work: done before the transaction opens.
    return addresses.check(body.url, allow_private=get_settings().webhooks_allow_private)


CheckedUrl = Annotated[addresses.Target, Depends(_checked_url)]
Pagination = Annotated[int, Query(ge=1, le=200)]
Cursor = Annotated[str | None, Query(max_length=100)]


# The secret is shown once: a replay answers it as null.
@router.post("", status_code=201, dependencies=[Depends(not_replayed("secret"))])
def register_webhook(
    body: WebhookCreate, principal: ComplianceWriter, _: CheckedUrl, session: SessionDep,
    webhook_id: CreatedId,
) -> WebhookCreated:
    """Register a webhook (compliance key); its signing secret is shown once."""
    return service.register(session, tenant_id=principal.tenant_id, body=body,
                            actor=audit.actor_for(principal), webhook_id=webhook_id)


@router.get("")
def list_webhooks(
    principal: ComplianceReader, session: SessionDep, limit: Pagination = 50,
    cursor: Cursor = None,
) -> WebhookList:
    """List webhooks, oldest first (compliance key)."""
    return service.page(session, tenant_id=principal.tenant_id, limit=limit, cursor=cursor)


@router.get("/{webhook_id}")
def read_webhook(
    webhook_id: uuid.UUID, principal: ComplianceReader, session: SessionDep
) -> WebhookPublic:
    """Read a webhook (compliance key)."""
    return service.get(session, tenant_id=principal.tenant_id, webhook_id=webhook_id)


@router.delete("/{webhook_id}", status_code=204)
def delete_webhook(
    webhook_id: uuid.UUID, principal: ComplianceWriter, session: SessionDep
) -> Response:
    """Delete a webhook and its delivery log (compliance key); audited."""
    service.remove(session, tenant_id=principal.tenant_id, webhook_id=webhook_id,
                   actor=audit.actor_for(principal))
    return Response(status_code=204)


@router.get("/{webhook_id}/deliveries")
def list_deliveries(
    webhook_id: uuid.UUID, principal: ComplianceReader, session: SessionDep,
    limit: Pagination = 50, cursor: Cursor = None,
) -> DeliveryList:
    """A webhook's delivery log, newest first: event, status, attempts, last answer."""
    return service.deliveries(session, tenant_id=principal.tenant_id, webhook_id=webhook_id,
                              limit=limit, cursor=cursor)
