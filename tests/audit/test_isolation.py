"""Each tenant has its own chain, and sees no other tenant's."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import ProgrammingError

from app.audit import service as audit
from app.core import uow
from tests.audit.helpers import ACTOR, append, verify


def test_tenants_chains_are_independent(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    mine = append(tenant["id"], 3)
    theirs = append(other_tenant["id"], 2)
    assert [e["seq"] for e in theirs] == [1, 2]
    assert (verify(tenant["id"]).events, verify(tenant["id"]).head) == (3, mine[-1]["hash"])
    assert (verify(other_tenant["id"]).events, verify(other_tenant["id"]).head) == (
        2, theirs[-1]["hash"])


def test_a_session_sees_only_its_tenants_events(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    append(tenant["id"], 3)
    append(other_tenant["id"], 2)
    with uow.unit_of_work(uuid.UUID(other_tenant["id"])) as session:
        # Deliberately without a tenant filter: row-level security does the filtering.
        tenants = session.execute(text("SELECT DISTINCT tenant_id FROM audit_event")).all()
        assert [str(row[0]) for row in tenants] == [other_tenant["id"]]
        # Asking for the other chain by name finds nothing either.
        assert audit.verify(session, tenant_id=uuid.UUID(tenant["id"])).events == 0


def test_appending_to_another_tenants_chain_is_refused(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    append(other_tenant["id"], 1)
    with pytest.raises(ProgrammingError, match="row-level security"), uow.unit_of_work(
        uuid.UUID(tenant["id"])
    ) as session:
        audit.record(session, tenant_id=uuid.UUID(other_tenant["id"]), actor=ACTOR,
                     action="memory.transition", target_kind="memory")
    assert verify(other_tenant["id"]).events == 1


def test_other_tenants_compliance_key_sees_nothing(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    target = str(uuid.uuid4())
    append(tenant["id"], 3, target_id=target)
    listed = client.get("/v1/audit", headers=other_tenant["compliance"])
    assert listed.status_code == 200 and listed.json() == {"data": [], "next_cursor": None}
    filtered = client.get("/v1/audit", params={"target_id": target},
                          headers=other_tenant["compliance"])
    assert filtered.json()["data"] == []
    verified = client.get("/v1/audit/verify", headers=other_tenant["compliance"]).json()
    assert verified == {"ok": True, "events": 0, "head": None, "first_bad_seq": None}
