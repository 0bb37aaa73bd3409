"""`POST /v1/access-requests` and `GET /v1/access-requests/{id}/export`: roles, tenants,
readiness, idempotency, redelivery and erasure of the export."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.access import export, store, tasks
from app.core import uow
from app.keys import digests
from tests.access.helpers import ANA, download, request_access, seed


def _export_status(client: Any, headers: dict[str, str], request_id: str) -> Any:
    return client.get(f"/v1/access-requests/{request_id}/export", headers=headers)


def test_the_export_is_not_ready_until_the_task_ran(
    client: Any, tenant: dict[str, Any]
) -> None:
    request_id = request_access(client, tenant["compliance"])
    waiting = _export_status(client, tenant["app"], request_id)
    assert waiting.status_code == 409
    assert waiting.headers["content-type"] == "application/problem+json"
    assert waiting.json()["type"].endswith("/export-not-ready")
    assert waiting.json()["operation_status"] == "queued"
    tasks.export(request_id, tenant["id"])
    assert _export_status(client, tenant["app"], request_id).status_code == 200


def test_another_tenant_and_unknown_ids_get_404(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    seed(client, tenant["app"])
    request_id = request_access(client, tenant["app"])
    assert _export_status(client, other_tenant["app"], request_id).status_code == 404
    tasks.export(request_id, tenant["id"])
    assert _export_status(client, other_tenant["compliance"], request_id).status_code == 404
    assert client.get(f"/v1/operations/{request_id}",
                      headers=other_tenant["app"]).status_code == 404
    assert _export_status(client, tenant["app"], str(uuid.uuid4())).status_code == 404
    # An operation of another kind is no access request.
    job = client.post("/v1/maintenance/decay", headers=tenant["compliance"]).json()
    assert _export_status(client, tenant["app"], job["operation_id"]).status_code == 404
    # The other tenant's own request for the same subject sees nothing of the first tenant.
    theirs = request_access(client, other_tenant["app"])
    tasks.export(theirs, other_tenant["id"])
    raw, document = download(client, other_tenant["app"], theirs)
    assert document["memories"] == [] and b"Porto" not in raw


def test_bodies_are_validated_and_keys_required(client: Any, tenant: dict[str, Any]) -> None:
    for body in ({}, {"subject": ""}, {"subject": "  "}, {"subject": "x" * 256},
                 {"subject": ANA, "extra": 1}, {"subject": 7}):
        response = client.post("/v1/access-requests", json=body, headers=tenant["app"])
        assert response.status_code == 422, body
    assert client.post("/v1/access-requests", json={"subject": ANA}).status_code == 401


def test_an_idempotency_key_replays_the_same_request(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = request_access(client, tenant["app"], key="access-7")
    replay = client.post("/v1/access-requests", json={"subject": ANA},
                         headers={**tenant["app"], "Idempotency-Key": "access-7"})
    assert replay.status_code == 202 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["operation_id"] == first
    other = client.post("/v1/access-requests", json={"subject": "user:bob"},
                        headers={**tenant["app"], "Idempotency-Key": "access-7"})
    assert other.status_code == 422
    count = owner_conn.execute(
        "SELECT count(*) FROM operation WHERE kind = 'access_request'").fetchone()[0]
    assert count == 1


def test_a_redelivered_task_changes_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    seed(client, tenant["app"])
    request_id = request_access(client, tenant["app"])
    assert tasks.export(request_id, tenant["id"]) is True
    first, _ = download(client, tenant["app"], request_id)
    assert tasks.export(request_id, tenant["id"]) is False
    again, _ = download(client, tenant["app"], request_id)
    assert again == first
    exported = owner_conn.execute(
        "SELECT count(*) FROM audit_event WHERE action = 'access.exported'").fetchone()[0]
    assert exported == 1


def test_a_failed_export_answers_409_failed(
    client: Any, tenant: dict[str, Any], monkeypatch: pytest.MonkeyPatch, owner_conn: Any
) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError(ANA)  # a message quoting data must not be stored

    monkeypatch.setattr(export, "build", broken)
    request_id = request_access(client, tenant["app"])
    assert tasks.export(request_id, tenant["id"]) is False
    failed = _export_status(client, tenant["app"], request_id)
    assert failed.status_code == 409 and failed.json()["operation_status"] == "failed"
    operation = client.get(f"/v1/operations/{request_id}", headers=tenant["app"]).json()
    assert operation["status"] == "failed" and operation["error"]["error"] == "RuntimeError"
    stored = " ".join(row[0] for row in owner_conn.execute("SELECT o::text FROM operation o"))
    assert ANA not in stored


def test_an_erased_or_expired_export_is_gone(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    seed(client, tenant["app"])
    first = request_access(client, tenant["app"])
    second = request_access(client, tenant["app"], subject="user:bob")
    for request_id in (first, second):
        tasks.export(request_id, tenant["id"])
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        tenant_id = uuid.UUID(tenant["id"])
        assert store.purge_subject(session, tenant_id=tenant_id,
                                   subject=digests.subject_digest(tenant_id, ANA)) == 1
    gone = _export_status(client, tenant["app"], first)
    assert gone.status_code == 404 and "expired or was erased" in gone.json()["detail"]
    assert _export_status(client, tenant["app"], second).status_code == 200
    owner_conn.execute("UPDATE access_export SET expires_at = now() - interval '1 second'")
    assert _export_status(client, tenant["app"], second).status_code == 404
    # Pruning the operation record takes its export along.
    owner_conn.execute("DELETE FROM operation WHERE id = %s", (second,))
    assert owner_conn.execute("SELECT count(*) FROM access_export").fetchone()[0] == 0
