"""Registering webhooks, reading their delivery log, and emitting events to them.

`emit` is how any domain tells the product something happened: one delivery row per webhook
subscribed to the event, in the caller's transaction, and a `webhooks.deliver` job for each,
sent after the commit (`app/webhooks/delivery.py` makes the attempts). An event's data holds
IDs, kinds, refs and times only: delivery rows outlive forgets, and receivers are outside.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlmodel import Session, col, select

from app.audit import service as audit
from app.core import paging
from app.core.jobs import enqueue_job
from app.core.models import utcnow
from app.webhooks import signing
from app.webhooks.errors import WebhookNotFound
from app.webhooks.models import Webhook, WebhookDelivery, WebhookEvent
from app.webhooks.schemas import (
    DeliveryList,
    DeliveryPublic,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookPublic,
)

DELIVER_TASK = "webhooks.deliver"
KIND = "webhook"


def register(
    session: Session, *, tenant_id: uuid.UUID, body: WebhookCreate, actor: str,
    webhook_id: uuid.UUID | None = None,
) -> WebhookCreated:
    """Register a webhook whose URL the caller already checked (`addresses.check`); the
    answer carries its secret, shown this once. ``webhook_id`` comes from the request's
    Idempotency-Key, if any: a late redelivery answers the webhook it made."""
    if webhook_id is not None:
        existing = session.get(Webhook, webhook_id)
        if existing is not None and existing.tenant_id == tenant_id:
            return _created(existing, show_secret=False)  # shown once, to the first answer
    webhook = Webhook(id=webhook_id or uuid.uuid4(), tenant_id=tenant_id, url=body.url,
                      events=[event.value for event in body.events])
    session.add(webhook)
    session.flush()
    audit.record(session, tenant_id=tenant_id, actor=actor, action="webhook.registered",
                 target_kind=KIND, target_id=webhook.id,
                 details={"events": list(webhook.events)})
    return _created(webhook, show_secret=True)


def get(session: Session, *, tenant_id: uuid.UUID, webhook_id: uuid.UUID) -> WebhookPublic:
    return WebhookPublic.model_validate(_load(session, tenant_id, webhook_id),
                                        from_attributes=True)


def page(
    session: Session, *, tenant_id: uuid.UUID, limit: int, cursor: str | None = None
) -> WebhookList:
    """Webhooks oldest first; the cursor is the last ID of the previous page."""
    statement = select(Webhook).where(Webhook.tenant_id == tenant_id)
    rows, next_cursor = paging.page(session, statement, Webhook, tenant_id=tenant_id,
                                    limit=limit, cursor=cursor)
    return WebhookList(
        data=[WebhookPublic.model_validate(row, from_attributes=True) for row in rows],
        next_cursor=next_cursor,
    )


def remove(session: Session, *, tenant_id: uuid.UUID, webhook_id: uuid.UUID, actor: str) -> None:
    """Delete a webhook and its delivery log; deliveries still queued are dropped."""
    webhook = _load(session, tenant_id, webhook_id)
    session.delete(webhook)
    session.flush()
    audit.record(session, tenant_id=tenant_id, actor=actor, action="webhook.deleted",
                 target_kind=KIND, target_id=webhook_id)


def deliveries(
    session: Session, *, tenant_id: uuid.UUID, webhook_id: uuid.UUID, limit: int,
    cursor: str | None = None,
) -> DeliveryList:
    """A webhook's delivery log, newest first; the cursor is the last ID of the previous
    page."""
    _load(session, tenant_id, webhook_id)
    statement = select(WebhookDelivery).where(WebhookDelivery.tenant_id == tenant_id,
                                              WebhookDelivery.webhook_id == webhook_id)
    rows, next_cursor = paging.page(session, statement, WebhookDelivery, tenant_id=tenant_id,
                                    limit=limit, cursor=cursor, newest_first=True)
    return DeliveryList(
        data=[DeliveryPublic.model_validate(row, from_attributes=True) for row in rows],
        next_cursor=next_cursor,
    )


def emit(
    session: Session, *, tenant_id: uuid.UUID, event: WebhookEvent, payload: Mapping[str, Any]
) -> list[uuid.UUID]:
    """Tell every webhook subscribed to ``event``; the deliveries' IDs."""
    return emit_each(session, tenant_id=tenant_id, event=event, payloads=[payload])


def emit_each(
    session: Session, *, tenant_id: uuid.UUID, event: WebhookEvent,
    payloads: Sequence[Mapping[str, Any]],
) -> list[uuid.UUID]:
    """One event per payload to every webhook subscribed to ``event`` (one lookup for all);
    each delivery is sent by a `webhooks.deliver` job after the commit."""
    if not payloads:
        return []
    subscribed = session.exec(
        select(Webhook.id).where(Webhook.tenant_id == tenant_id,
                                 col(Webhook.events).contains([event.value]))
        .order_by(col(Webhook.created_at), col(Webhook.id))
    ).all()
    if not subscribed:
        return []
    now = utcnow()
    created: list[uuid.UUID] = []
    for payload in payloads:
        body = json.dumps({"type": event.value, "timestamp": now.isoformat(),
                           "data": dict(payload)}, separators=(",", ":"), sort_keys=True)
        for webhook_id in subscribed:
            delivery = WebhookDelivery(tenant_id=tenant_id, webhook_id=webhook_id,
                                       event=event.value, body=body, next_attempt_at=now)
            session.add(delivery)
            created.append(delivery.id)
    session.flush()
    for delivery_id in created:
        enqueue_job(DELIVER_TASK, delivery_id, tenant_id)
    return created


def _created(webhook: Webhook, *, show_secret: bool) -> WebhookCreated:
    return WebhookCreated(
        id=webhook.id, url=webhook.url, events=[WebhookEvent(e) for e in webhook.events],
        created_at=webhook.created_at,
        secret=signing.secret_for(tenant_id=webhook.tenant_id, webhook_id=webhook.id)
        if show_secret else None,
    )


def _load(session: Session, tenant_id: uuid.UUID, webhook_id: uuid.UUID) -> Webhook:
    webhook = session.exec(
        select(Webhook).where(Webhook.tenant_id == tenant_id, Webhook.id == webhook_id)
    ).first()
    if webhook is None:
        raise WebhookNotFound()
    return webhook


