"""The hash chain verifies intact, and any edit made around the trigger shows in verify."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from app.audit import chain
from app.audit import service as audit
from app.core import uow
from tests.audit.helpers import ACTOR, append, tamper, verify

WHERE = "WHERE tenant_id = %s AND seq = %s"


def test_chain_of_five_verifies_with_head_the_last_hash(tenant: dict[str, Any]) -> None:
    written = append(tenant["id"], 3) + append(tenant["id"], 2)
    assert [e["seq"] for e in written] == [1, 2, 3, 4, 5]
    result = verify(tenant["id"])
    assert (result.ok, result.events, result.head, result.first_bad_seq) == (
        True, 5, written[-1]["hash"], None)


def test_first_event_links_to_zeros_and_each_next_to_its_predecessor(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    append(tenant["id"], 3)
    rows = owner_conn.execute(
        "SELECT seq, prev_hash, hash FROM audit_event WHERE tenant_id = %s ORDER BY seq",
        (tenant["id"],),
    ).fetchall()
    assert rows[0][1] == "0" * 64
    assert [r[1] for r in rows[1:]] == [r[2] for r in rows[:-1]]


def test_events_recorded_in_this_transaction_verify_before_commit(
    tenant: dict[str, Any]
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        for _ in range(3):
            last = audit.record(session, tenant_id=tenant_id, actor=ACTOR,
                                action="memory.transition", target_kind="memory")
        result = audit.verify(session, tenant_id=tenant_id)
    assert (result.ok, result.events, result.head) == (True, 3, last.hash)


def test_empty_chain_is_ok_without_head(tenant: dict[str, Any]) -> None:
    result = verify(tenant["id"])
    assert (result.ok, result.events, result.head, result.first_bad_seq) == (True, 0, None, None)


def test_changed_reason_is_reported_at_its_seq(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], 5)
    tamper(owner_conn, (f"UPDATE audit_event SET reason = 'nothing happened' {WHERE}",
                        (tenant["id"], 3)))
    result = verify(tenant["id"])
    assert (result.ok, result.first_bad_seq, result.events) == (False, 3, 5)


def test_changed_details_are_reported(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], 4, details={"count": 2})
    tamper(owner_conn, (f"UPDATE audit_event SET details = '{{\"count\": 0}}' {WHERE}",
                        (tenant["id"], 2)))
    assert verify(tenant["id"]).first_bad_seq == 2


def test_deleted_middle_row_is_reported_as_the_missing_seq(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    append(tenant["id"], 5)
    tamper(owner_conn, (f"DELETE FROM audit_event {WHERE}", (tenant["id"], 3)))
    result = verify(tenant["id"])
    assert (result.ok, result.first_bad_seq, result.events) == (False, 3, 4)


def test_deleted_first_row_is_reported(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], 3)
    tamper(owner_conn, (f"DELETE FROM audit_event {WHERE}", (tenant["id"], 1)))
    assert verify(tenant["id"]).first_bad_seq == 1


def test_reordered_rows_are_reported(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], 5)
    swap = "UPDATE audit_event SET seq = %s " + WHERE
    tamper(owner_conn, (swap, (100, tenant["id"], 2)), (swap, (2, tenant["id"], 4)),
           (swap, (4, tenant["id"], 100)))
    result = verify(tenant["id"])
    assert (result.ok, result.first_bad_seq) == (False, 2)


def test_reordered_timestamps_are_reported(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], 3)
    tamper(owner_conn, (f"UPDATE audit_event SET created_at = created_at - interval '1 day' "
                        f"{WHERE}", (tenant["id"], 2)))
    assert verify(tenant["id"]).first_bad_seq == 2


def test_rehashed_forgery_breaks_the_next_link(tenant: dict[str, Any], owner_conn: Any) -> None:
    append(tenant["id"], 4)
    forged = _rehash(owner_conn, tenant["id"], 2, reason="forged")
    tamper(owner_conn, (f"UPDATE audit_event SET reason = 'forged', hash = %s {WHERE}",
                        (forged, tenant["id"], 2)))
    assert verify(tenant["id"]).first_bad_seq == 3


def test_rewritten_tail_changes_the_head(tenant: dict[str, Any], owner_conn: Any) -> None:
    """A forged last event verifies on its own; only the head kept elsewhere reveals it."""
    written = append(tenant["id"], 3)
    forged = _rehash(owner_conn, tenant["id"], 3, reason="forged")
    tamper(owner_conn, (f"UPDATE audit_event SET reason = 'forged', hash = %s {WHERE}",
                        (forged, tenant["id"], 3)))
    result = verify(tenant["id"])
    assert result.ok and result.head == forged != written[-1]["hash"]


def test_details_come_back_from_jsonb_exactly_as_hashed(tenant: dict[str, Any]) -> None:
    append(tenant["id"], details={"big": 1e16, "neg_zero": -0.0, "small": 1e-7, "ratio": 0.1 + 0.2,
                                  "nested": {"ids": ["a", "b"], "on": True, "none": None},
                                  "huge": 2**70})
    assert verify(tenant["id"]).ok


def _rehash(owner_conn: Any, tenant_id: str, seq: int, **changes: Any) -> str:
    row = owner_conn.execute(
        "SELECT tenant_id, seq, actor, action, target_kind, target_id, from_state, to_state, "
        f"reason, details, created_at, prev_hash FROM audit_event {WHERE}", (tenant_id, seq),
    ).fetchone()
    names = ("tenant_id", "seq", "actor", "action", "target_kind", "target_id", "from_state",
             "to_state", "reason", "details", "created_at", "prev_hash")
    fields = dict(zip(names, row, strict=True))
    fields.update(changes, tenant_id=str(fields["tenant_id"]),
                  created_at=chain.timestamp(fields["created_at"]))
    return hashlib.sha256(chain.canonical(fields)).hexdigest()
