"""The receipt of an erasure: built from the request's records when read, then signed.

Built on read rather than stored, so it always says what the records say now (an artifact
acknowledged later shows up); the signature covers exactly what is served. It names IDs,
counts, times, the subject's digest and its destroyed data key's ID: nothing an auditor could
not be shown.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from app.artifacts.models import Artifact
from app.erasure.models import ErasureRequest, ErasureTarget
from app.erasure.schemas import Counts, HeldItem, Receipt, ReceiptArtifact
from app.receipts import signing


def build(session: Session, request: ErasureRequest) -> Receipt:
    tombstoned = session.exec(
        select(ErasureTarget.memory_id).where(
            ErasureTarget.tenant_id == request.tenant_id,
            ErasureTarget.request_id == request.id, col(ErasureTarget.done).is_(True),
            col(ErasureTarget.erased_seq).is_not(None))
        .order_by(col(ErasureTarget.erased_seq), col(ErasureTarget.memory_id))
    ).all()
    artifacts = session.exec(
        select(Artifact).where(Artifact.tenant_id == request.tenant_id,
                               Artifact.erasure_request_id == request.id)
        .order_by(col(Artifact.id))
    ).all()
    body: dict[str, Any] = {
        "request_id": str(request.id),
        "tenant_id": str(request.tenant_id),
        "subject_digest": request.subject_digest,
        "status": request.status,
        "requested_at": request.created_at.isoformat(),
        "completed_at": _iso(request.completed_at),
        "vacuumed_at": _iso(request.vacuumed_at),
        "counts": Counts.model_validate(request.counts).model_dump(),
        "tombstoned": [str(memory_id) for memory_id in tombstoned],
        "held": [HeldItem.model_validate(item).model_dump() for item in request.held],
        "artifacts": [ReceiptArtifact(id=str(a.id), status=a.status,
                                      acknowledged_at=_iso(a.acknowledged_at)).model_dump()
                      for a in artifacts],
        "data_key": {"key_id": request.data_key_id,
                     "key_destroyed_at": _iso(request.key_destroyed_at)},
    }
    return Receipt.model_validate(signing.sign(body))


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())
