from __future__ import annotations

import uuid
from typing import Any


def sample_receipt() -> dict[str, Any]:
    """A receipt of the shape `GET /v1/erasure-requests/{id}/receipt` answers."""
    held, tombstone = str(uuid.uuid4()), str(uuid.uuid4())
    return {
        "request_id": str(uuid.uuid4()),
        "tenant_id": str(uuid.uuid4()),
        "subject_digest": "9f2c1e6b0a7d4f3e8c5b2a1d0e9f8c7b6a5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
        "status": "completed",
        "requested_at": "2026-12-01T09:30:00Z",
        "completed_at": "2026-12-01T09:30:04.512Z",
        "vacuumed_at": None,
        "counts": {"memories": 12, "versions": 19, "derived_memories": 3, "retractions": 2,
                   "operations": 4, "idempotency_records": 7, "artifacts": 1},
        "tombstoned": [tombstone, str(uuid.uuid4())],
        "held": [{"memory_id": held, "hold_id": str(uuid.uuid4())}],
        "artifacts": [{"id": str(uuid.uuid4()), "status": "acknowledged",
                       "acknowledged_at": "2026-12-01T09:30:03Z"}],
        "complete": True,
    }
