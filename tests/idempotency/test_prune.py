from __future__ import annotations

from typing import Any

from app.idempotency import tasks


def test_prune_removes_only_expired_finished_records(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    for who, key in ((tenant, "a"), (tenant, "b"), (other_tenant, "c")):
        response = client.patch("/v1/settings", json={"detect_forget_requests": True},
                                headers={**who["compliance"], "Idempotency-Key": key})
        assert response.status_code == 200
    owner_conn.execute(
        "UPDATE operation SET expires_at = now() - interval '1 hour' "
        "WHERE idempotency_key IN ('a', 'c')"
    )
    assert tasks.prune_operations() == 2
    left = [r[0] for r in owner_conn.execute("SELECT idempotency_key FROM operation")]
    assert left == ["b"]
    assert tasks.prune_operations() == 0
