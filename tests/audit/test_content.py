"""Audit rows stay content-free: text-sized values are refused, not stored."""

from __future__ import annotations

import math
import uuid
from typing import Any

import pytest

from app.audit import service as audit
from app.core import uow
from tests.audit.helpers import ACTOR, append


@pytest.mark.parametrize("fields", [
    {"reason": "x" * 501},
    {"reason": "bad\x00byte"},
    {"details": {"note": "x" * 201}},
    {"details": {"ids": ["ok", "y" * 201]}},
    {"details": {"deep": {"deeper": {"text": "z" * 201}}}},
    {"details": {"k" * 65: 1}},
    {"details": {"ratio": math.nan}},
    {"details": {"ratio": math.inf}},
    {"details": {"when": object()}},
    {"details": {"a": {"b": {"c": {"d": {"e": 1}}}}}},
    {"details": {"many": list(range(101))}},
    {"details": ["not", "an", "object"]},
    {"actor": "Alice from accounting"},
    {"actor": "key:not-a-uuid"},
    {"action": "Memory transitioned because the user said so"},
    {"target_kind": "memory text"},
    {"to_state": "x" * 21},
    {"target_id": "t" * 256},
])
def test_values_that_could_carry_content_are_refused(
    tenant: dict[str, Any], owner_conn: Any, fields: dict[str, Any]
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    arguments: dict[str, Any] = {"actor": ACTOR, "action": "memory.transition",
                                 "target_kind": "memory", **fields}
    with pytest.raises(ValueError), uow.unit_of_work(tenant_id) as session:
        audit.record(session, tenant_id=tenant_id, **arguments)
    assert owner_conn.execute("SELECT count(*) FROM audit_event").fetchone()[0] == 0


def test_values_at_the_caps_are_kept(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], reason="r" * 500, details={"id": "i" * 200, "k" * 64: [1, 2.5, None]})
    reason, details = owner_conn.execute("SELECT reason, details FROM audit_event").fetchone()
    assert reason == "r" * 500
    assert details == {"id": "i" * 200, "k" * 64: [1, 2.5, None]}


def test_actor_forms(tenant: dict[str, Any]) -> None:
    key_id = uuid.uuid4()
    principal: Any = type("P", (), {"key_id": key_id})()
    assert audit.actor_for(principal) == f"key:{key_id}"
    for actor in (audit.actor_for(principal), audit.system_actor("retention"), audit.ADMIN):
        append(tenant["id"], actor=actor)


def test_uuid_targets_and_detail_ids_are_stored_as_strings(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory_id, other_id = uuid.uuid4(), uuid.uuid4()
    append(tenant["id"], target_id=memory_id, details={"superseded_by": other_id})
    target, details = owner_conn.execute("SELECT target_id, details FROM audit_event").fetchone()
    assert (target, details) == (str(memory_id), {"superseded_by": str(other_id)})
