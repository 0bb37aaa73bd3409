"""Verifying only the tail of a chain, linked to an earlier intact result."""

from __future__ import annotations

import uuid
from typing import Any

from app.audit import service as audit
from app.core import uow


def _append(tenant_id: uuid.UUID, count: int) -> None:
    with uow.unit_of_work(tenant_id) as session:
        for _ in range(count):
            audit.record(session, tenant_id=tenant_id, actor="admin", action="test.noted",
                         target_kind="test")


def test_tail_verification_agrees_with_a_full_one(tenant: dict[str, Any]) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    _append(tenant_id, 5)
    with uow.unit_of_work(tenant_id) as session:
        earlier = audit.verify(session, tenant_id=tenant_id)
    _append(tenant_id, 7)
    with uow.unit_of_work(tenant_id) as session:
        tail = audit.verify(session, tenant_id=tenant_id, after=earlier)
        full = audit.verify(session, tenant_id=tenant_id)
    assert tail == full
    assert tail.events == earlier.events + 7


def test_a_head_that_no_longer_links_is_reported(tenant: dict[str, Any]) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    _append(tenant_id, 3)
    with uow.unit_of_work(tenant_id) as session:
        earlier = audit.verify(session, tenant_id=tenant_id)
    _append(tenant_id, 2)
    forged = earlier.model_copy(update={"head": "0" * 64})
    with uow.unit_of_work(tenant_id) as session:
        tail = audit.verify(session, tenant_id=tenant_id, after=forged)
    assert not tail.ok and tail.first_bad_seq == earlier.events + 1
