"""`/v1/erasure-requests`: filing, duplicates, the approval gate, cancelling, listing,
roles and tenants."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from app.core import jobs
from tests.erasure.helpers import SUBJECT, file, remember, run, status


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """The jobs units of work send after their commits (to the broker, besides)."""
    seen: list[tuple[str, list[str]]] = []
    original = jobs.celery_app.send_task

    def record(name: str, args: list[str] | None = None, **kwargs: Any) -> Any:
        seen.append((name, list(args or [])))
        return original(name, args=args, **kwargs)

    monkeypatch.setattr(jobs.celery_app, "send_task", record)
    return seen


def test_filing_answers_202_with_the_due_date_and_queues_the_cascade(
    client: Any, tenant: dict[str, Any], sent: list[tuple[str, list[str]]]
) -> None:
    response = client.post("/v1/erasure-requests",
                           json={"subject": SUBJECT, "reason": "GDPR request",
                                 "requested_by": "ticket 991"}, headers=tenant["app"])
    assert response.status_code == 202, response.text
    body = response.json()
    assert set(body) == {"id", "subject", "status", "due_at", "created_at"}
    assert body["subject"] == SUBJECT and body["status"] == "pending"
    due = datetime.fromisoformat(body["due_at"]) - datetime.fromisoformat(body["created_at"])
    assert due == timedelta(days=30)
    assert ("erasure.run", [body["id"], tenant["id"]]) in sent
    read = status(client, tenant["app"], body["id"])
    assert read["progress"] == {"done": 0, "total": 0} and read["receipt"] is None
    assert read["overdue"] is False


def test_a_second_filing_while_one_is_open_answers_that_one_with_200(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = file(client, tenant["app"])
    again = client.post("/v1/erasure-requests", json={"subject": SUBJECT},
                        headers=tenant["app"])
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    other = file(client, tenant["app"], subject="user:43")
    assert other["id"] != first["id"]
    run(first["id"], tenant["id"])
    after = client.post("/v1/erasure-requests", json={"subject": SUBJECT},
                        headers=tenant["app"])
    assert after.status_code == 202 and after.json()["id"] != first["id"]


def test_a_replayed_filing_answers_the_same_request(client: Any, tenant: dict[str, Any]) -> None:
    headers = {**tenant["app"], "Idempotency-Key": "erase-42"}
    first = client.post("/v1/erasure-requests", json={"subject": SUBJECT}, headers=headers)
    replay = client.post("/v1/erasure-requests", json={"subject": SUBJECT}, headers=headers)
    assert replay.status_code == 202 and replay.json() == first.json()
    assert replay.headers["Idempotent-Replayed"] == "true"


def test_the_approval_gate_holds_the_cascade_until_an_officer_approves(
    client: Any, tenant: dict[str, Any], sent: list[tuple[str, list[str]]]
) -> None:
    patched = client.patch("/v1/settings", json={"erasure": {"require_approval": True,
                                                             "due_days": 10}},
                           headers=tenant["compliance"])
    assert patched.status_code == 200, patched.text
    remember(client, tenant["app"], SUBJECT, "Plays the oboe")
    filed = file(client, tenant["app"])
    assert filed["status"] == "pending_approval"
    assert not [job for job in sent if job[0] == "erasure.run"]
    assert run(filed["id"], tenant["id"]) == "skipped"  # a stray delivery does nothing
    assert client.post(f"/v1/erasure-requests/{filed['id']}/approve",
                       headers=tenant["app"]).status_code == 403
    approved = client.post(f"/v1/erasure-requests/{filed['id']}/approve",
                           headers=tenant["compliance"])
    assert approved.status_code == 200 and approved.json()["status"] == "pending"
    assert approved.json()["approved_at"] is not None
    assert ("erasure.run", [filed["id"], tenant["id"]]) in sent
    again = client.post(f"/v1/erasure-requests/{filed['id']}/approve",
                        headers=tenant["compliance"])
    assert again.status_code == 409
    assert again.json()["type"] == "https://lethe.dev/problems/erasure-state-conflict"
    assert run(filed["id"], tenant["id"]) == "completed"
    cancel = client.post(f"/v1/erasure-requests/{filed['id']}/cancel",
                         headers=tenant["compliance"])
    assert cancel.status_code == 409


def test_a_cancelled_request_runs_nothing_and_keeps_no_subject(
    client: Any, tenant: dict[str, Any]
) -> None:
    kept = remember(client, tenant["app"], SUBJECT, "Plays the oboe")
    filed = file(client, tenant["app"])
    cancelled = client.post(f"/v1/erasure-requests/{filed['id']}/cancel",
                            headers=tenant["compliance"])
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["subject"] is None
    assert run(filed["id"], tenant["id"]) == "skipped"
    assert client.get(f"/v1/memories/{kept}", headers=tenant["app"]).status_code == 200
    assert client.get(f"/v1/erasure-requests/{filed['id']}/receipt",
                      headers=tenant["app"]).status_code == 409


def test_listing_filters_by_status_and_by_the_plain_subject(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = file(client, tenant["app"])
    second = file(client, tenant["app"], subject="user:43")
    run(first["id"], tenant["id"])
    listing = client.get("/v1/erasure-requests?limit=1", headers=tenant["compliance"]).json()
    assert [r["id"] for r in listing["data"]] == [first["id"]] and listing["next_cursor"]
    rest = client.get(f"/v1/erasure-requests?cursor={listing['next_cursor']}",
                      headers=tenant["compliance"]).json()
    assert [r["id"] for r in rest["data"]] == [second["id"]]
    done = client.get("/v1/erasure-requests?status=completed",
                      headers=tenant["compliance"]).json()
    assert [r["id"] for r in done["data"]] == [first["id"]]
    by_subject = client.get(f"/v1/erasure-requests?subject={SUBJECT}",
                            headers=tenant["compliance"]).json()
    assert [r["id"] for r in by_subject["data"]] == [first["id"]]
    assert by_subject["data"][0]["subject"] is None
    bad = client.get("/v1/erasure-requests?status=nonsense", headers=tenant["compliance"])
    assert bad.status_code == 422


def test_app_keys_file_and_poll_but_only_compliance_lists_approves_and_cancels(
    client: Any, tenant: dict[str, Any]
) -> None:
    filed = file(client, tenant["app"])
    assert client.get("/v1/erasure-requests", headers=tenant["app"]).status_code == 403
    for action in ("approve", "cancel"):
        assert client.post(f"/v1/erasure-requests/{filed['id']}/{action}",
                           headers=tenant["app"]).status_code == 403
    assert client.get(f"/v1/erasure-requests/{filed['id']}",
                      headers=tenant["app"]).status_code == 200


def test_another_tenant_sees_404_for_every_request_route(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    filed = file(client, tenant["app"])
    run(filed["id"], tenant["id"])
    theirs = other_tenant["compliance"]
    for method, path in (("GET", ""), ("GET", "/receipt"), ("POST", "/approve"),
                         ("POST", "/cancel")):
        response = client.request(method, f"/v1/erasure-requests/{filed['id']}{path}",
                                  headers=theirs)
        assert response.status_code == 404, (method, path, response.text)
    assert client.get("/v1/erasure-requests", headers=theirs).json()["data"] == []
    # The same subject in another tenant is another request, with another digest.
    mine = status(client, tenant["compliance"], filed["id"])
    other = file(client, other_tenant["app"])
    assert status(client, theirs, other["id"])["subject_digest"] != mine["subject_digest"]


def test_releasing_a_hold_resumes_erasures_and_is_announced(
    client: Any, tenant: dict[str, Any], sent: list[tuple[str, list[str]]]
) -> None:
    hold = client.post("/v1/legal-holds", json={"subject": SUBJECT, "reason": "case"},
                       headers=tenant["compliance"]).json()
    client.delete(f"/v1/legal-holds/{hold['id']}", headers=tenant["compliance"])
    assert ("erasure.resume", [tenant["id"]]) in sent


def test_the_audit_of_an_erasure_names_no_subject(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    remember(client, tenant["app"], SUBJECT, "Plays the oboe", source="chat:4242")
    filed = file(client, tenant["app"], reason="asked by the user")
    run(filed["id"], tenant["id"])
    rows = owner_conn.execute("SELECT target_id, reason, details::text FROM audit_event"
                              ).fetchall()
    assert not [row for row in rows if SUBJECT in repr(row) or "chat:4242" in repr(row)]
