"""Delivering one event to one webhook: an attempt, its record, and when to try again.

An attempt locks its delivery row (SKIP LOCKED), sends, and records what it got in the same
transaction, so a redelivered or duplicated `webhooks.deliver` message either waits for
nothing (the row is busy: it does nothing) or finds the attempt recorded (not due any more:
it does nothing). Retries wait `LETHE_WEBHOOKS_RETRY_SECONDS` in turn (5 s, 30 s, 2 min,
10 min, 1 h, …); after the last the delivery is `failed`. A 2xx answer to
`artifact.erase_requested` acknowledges that artifact's erasure.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from sqlmodel import Session, col, select

from app.artifacts import service as artifacts
from app.audit import service as audit
from app.core.config import get_settings
from app.core.models import utcnow
from app.webhooks import addresses, signing
from app.webhooks.errors import UnsafeWebhookUrl
from app.webhooks.models import DeliveryStatus, Webhook, WebhookDelivery, WebhookEvent

log = logging.getLogger(__name__)
ACTOR = audit.system_actor("webhooks")
USER_AGENT = "Lethe-Webhooks/1"
# A message may arrive a little before its row's time (clocks of two processes).
EARLY = timedelta(seconds=0.5)


@dataclass(frozen=True)
class Attempted:
    """What one `attempt` did: ``status`` None when it sent nothing (not due, busy, gone)."""

    status: DeliveryStatus | None
    retry_in: float | None = None


@dataclass(frozen=True)
class Answer:
    status_code: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def attempt(
    session: Session, *, tenant_id: uuid.UUID, delivery_id: uuid.UUID,
    now: datetime | None = None,
) -> Attempted:
    """Send the delivery if it is pending and due, and record the attempt."""
    now = now or utcnow()
    delivery = session.exec(
        select(WebhookDelivery)
        .where(WebhookDelivery.tenant_id == tenant_id, WebhookDelivery.id == delivery_id,
               WebhookDelivery.status == DeliveryStatus.pending.value,
               col(WebhookDelivery.next_attempt_at) <= now + EARLY)
        .with_for_update(skip_locked=True).execution_options(populate_existing=True)
    ).first()
    if delivery is None:
        return Attempted(status=None)
    webhook = session.get(Webhook, delivery.webhook_id)
    if webhook is None:
        return Attempted(status=None)
    answer = send(webhook, delivery, at=now)
    delivery.attempts += 1
    delivery.last_attempt_at = now
    delivery.last_status_code = answer.status_code
    delivery.last_error = answer.error
    retry_in: float | None = None
    if answer.ok:
        delivery.status = DeliveryStatus.delivered.value
        delivery.delivered_at = now
        delivery.next_attempt_at = None
    else:
        waits = get_settings().webhooks_retry_seconds
        if delivery.attempts > len(waits):
            delivery.status = DeliveryStatus.failed.value
            delivery.next_attempt_at = None
        else:
            retry_in = waits[delivery.attempts - 1]
            delivery.next_attempt_at = now + timedelta(seconds=retry_in)
    session.add(delivery)
    session.flush()
    if answer.ok and delivery.event == WebhookEvent.artifact_erase_requested:
        artifact_id = json.loads(delivery.body)["data"]["artifact_id"]
        artifacts.acknowledge_delivered(session, tenant_id=tenant_id,
                                        artifact_id=uuid.UUID(artifact_id), actor=ACTOR)
    return Attempted(status=DeliveryStatus(delivery.status), retry_in=retry_in)


def send(webhook: Webhook, delivery: WebhookDelivery, *, at: datetime) -> Answer:
    """POST the delivery's body, signed, to an address of the webhook's host that passes the
    address check now; the answer's status, or a content-free error."""
    settings = get_settings()
    try:
        target = addresses.check(webhook.url, allow_private=settings.webhooks_allow_private)
    except UnsafeWebhookUrl:
        return Answer(None, "refused: the URL no longer resolves to allowed addresses")
    headers = {
        **signing.headers(tenant_id=webhook.tenant_id, webhook_id=webhook.id,
                          message_id=str(delivery.id), body=delivery.body, at=at),
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "host": target.host_header,
    }
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    error = "connection failed"
    with httpx.Client(timeout=settings.webhooks_timeout_seconds, follow_redirects=False,
                      trust_env=False) as client:
        for address in target.addresses:
            try:
                request = client.build_request("POST", target.at(address),
                                               content=delivery.body.encode(), headers=headers,
                                               extensions=extensions)
                # The answer's body is never read: its status is all that counts.
                response = client.send(request, stream=True)
                response.close()
                return Answer(response.status_code,
                              None if response.is_success else f"HTTP {response.status_code}")
            except httpx.ConnectError:
                continue  # the next address of the host, if any
            except httpx.TimeoutException:
                return Answer(None, "timeout")
            except httpx.HTTPError as exc:
                return Answer(None, type(exc).__name__)
    return Answer(None, error)


def due(
    session: Session, *, tenant_id: uuid.UUID, before: datetime, limit: int = 1000
) -> list[uuid.UUID]:
    """Pending deliveries due before ``before``: their message was lost (or is late)."""
    return list(session.exec(
        select(WebhookDelivery.id)
        .where(WebhookDelivery.tenant_id == tenant_id,
               WebhookDelivery.status == DeliveryStatus.pending.value,
               col(WebhookDelivery.next_attempt_at) < before)
        .order_by(col(WebhookDelivery.next_attempt_at)).limit(limit)
    ).all())
