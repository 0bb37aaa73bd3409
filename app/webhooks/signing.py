"""Webhook secrets and signatures in the Standard Webhooks form.

A webhook's secret is derived from the server's secret key and the webhook's tenant and ID,
so the database never holds it: it is shown once at registration and recomputed to sign
each delivery. Changing `LETHE_SECRET_KEY` therefore changes every webhook's secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from datetime import datetime

from standardwebhooks.webhooks import Webhook

from app.core.runtime import get_runtime

PREFIX = "whsec_"
_CONTEXT = b"lethe webhook secret v1\x00"


def secret_for(*, tenant_id: uuid.UUID, webhook_id: uuid.UUID) -> str:
    """The webhook's secret: `whsec_` + base64 of 32 bytes."""
    key = get_runtime().secret_key.encode()
    raw = hmac.new(key, _CONTEXT + tenant_id.bytes + webhook_id.bytes, hashlib.sha256).digest()
    return PREFIX + base64.b64encode(raw).decode()


def headers(
    *, tenant_id: uuid.UUID, webhook_id: uuid.UUID, message_id: str, body: str, at: datetime
) -> dict[str, str]:
    """`webhook-id`, `webhook-timestamp` and `webhook-signature` for ``body`` sent ``at``."""
    signer = Webhook(secret_for(tenant_id=tenant_id, webhook_id=webhook_id))
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signer.sign(message_id, at, body),
    }
