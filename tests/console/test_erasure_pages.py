"""The erasure pages through HTTP: list, file, approve, cancel, progress, receipt, download."""

from __future__ import annotations

import json
from typing import Any

from app.receipts import offline
from tests.console.records_support import csrf_of, remember, sign_in
from tests.erasure.helpers import run


def _file(client: Any, subject: str = "user:42", **fields: str) -> Any:
    token = csrf_of(client.get("/console/erasures").text)
    return client.post("/console/erasures", data={"csrf_token": token, "subject": subject,
                                                  **fields}, follow_redirects=False)


def _actor(owner_conn: Any, tenant: dict[str, Any]) -> str:
    """The audit actor of the officer `sign_in` signed in (the newest staff member)."""
    row = owner_conn.execute("SELECT id FROM staff WHERE tenant_id = %s "
                             "ORDER BY created_at DESC LIMIT 1", (tenant["id"],)).fetchone()
    return f"staff:{row[0]}"


def test_file_an_erasure_and_see_it_listed_with_its_due_date(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    sign_in(client, tenant)
    filed = _file(client, reason="customer request", requested_by="ticket 1")
    assert filed.status_code == 303
    request_id = filed.headers["location"].rsplit("/", 1)[1]
    assert filed.headers["location"] == f"/console/erasures/{request_id}"
    api = client.get(f"/v1/erasure-requests/{request_id}", headers=tenant["compliance"]).json()
    assert api["status"] == "pending" and api["reason"] == "customer request"
    events = client.get("/v1/audit", params={"target_id": request_id},
                        headers=tenant["compliance"]).json()["data"]
    assert events[0]["action"] == "erasure.requested"
    assert events[0]["actor"] == _actor(owner_conn, tenant)

    page = client.get(f"/console/erasures/{request_id}")
    assert page.status_code == 200
    assert 'hx-trigger="every 2s"' in page.text  # refreshes while it can move by itself
    assert '<meta http-equiv="refresh"' in page.text  # and without JavaScript
    assert "htmx.min.js" in page.text

    listing = client.get("/console/erasures")
    assert request_id in listing.text and "overdue" not in listing.text.split("<tbody>")[1]
    owner_conn.execute("UPDATE erasure_request SET due_at = now() - interval '1 day'")
    assert "badge--overdue" in client.get("/console/erasures").text
    assert request_id not in client.get("/console/erasures?status=completed").text

    # A second filing for the same subject lands on the open request.
    again = _file(client)
    assert again.headers["location"] == f"/console/erasures/{request_id}"


def test_erasure_form_shows_errors_beside_the_field(client: Any, tenant: dict[str, Any]) -> None:
    sign_in(client, tenant)
    refused = _file(client, subject="  ")
    assert refused.status_code == 422
    assert 'id="subject-error"' in refused.text
    assert client.get("/v1/erasure-requests", headers=tenant["compliance"]).json()["data"] == []


def test_approve_and_cancel_behind_the_approval_gate(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    gate = client.patch("/v1/settings", json={"erasure": {"require_approval": True}},
                        headers=tenant["compliance"])
    assert gate.status_code == 200, gate.text
    sign_in(client, tenant)
    first = _file(client, "user:1").headers["location"]
    second = _file(client, "user:2").headers["location"]
    page = client.get(first)
    assert "pending_approval" in page.text and ">Approve<" in page.text
    assert client.post(f"{first}/approve", data={"csrf_token": csrf_of(page.text)},
                       follow_redirects=False).status_code == 303
    assert client.post(f"{second}/cancel", data={"csrf_token": csrf_of(page.text)},
                       follow_redirects=False).status_code == 303
    statuses = {item["id"]: item["status"] for item in client.get(
        "/v1/erasure-requests", headers=tenant["compliance"]).json()["data"]}
    first_id, second_id = first.rsplit("/", 1)[1], second.rsplit("/", 1)[1]
    assert statuses == {first_id: "pending", second_id: "cancelled"}
    again = client.post(f"{second}/approve", data={"csrf_token": csrf_of(page.text)})
    assert again.status_code == 409 and 'id="erasure-error"' in again.text
    assert client.post(f"{first}/cancel", data={}).status_code == 403  # no CSRF token
    events = client.get("/v1/audit", params={"target_id": second_id},
                        headers=tenant["compliance"]).json()["data"]
    assert events[-1]["to_state"] == "cancelled"
    assert events[-1]["actor"] == _actor(owner_conn, tenant)


def test_completed_erasure_shows_and_downloads_a_verifiable_receipt(
    client: Any, tenant: dict[str, Any], tmp_path: Any
) -> None:
    kept = remember(client, tenant, "Under investigation")
    remember(client, tenant, "Lives in Oslo")
    client.post("/v1/legal-holds", json={"memory_ids": [kept], "reason": "case"},
                headers=tenant["compliance"])
    sign_in(client, tenant)
    location = _file(client).headers["location"]
    request_id = location.rsplit("/", 1)[1]
    assert client.get(f"{location}/receipt.json").status_code == 409
    run(request_id, tenant["id"])

    page = client.get(location)
    assert "on_hold" in page.text
    assert "signature valid" in page.text
    assert kept in page.text.split('id="receipt-held"')[1]
    assert "hx-trigger" not in page.text  # waits on a person now: no refreshing
    # Past `pending` nothing can be cancelled, and the status part (receipt included) is one
    # balanced element, so a refresh swapping it cannot leave a second receipt behind.
    assert "Cancel request" not in page.text
    status_part = page.text.split('id="erasure-status"')[1]
    assert status_part.count('id="receipt"') == 1
    assert status_part.count("<div") == status_part.count("</div>") - 1
    fragment = client.get(f"{location}/status")
    assert fragment.status_code == 200 and "<html" not in fragment.text
    assert 'id="erasure-status"' in fragment.text

    download = client.get(f"{location}/receipt.json")
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/json"
    assert "attachment" in download.headers["content-disposition"]
    receipt = download.json()
    assert receipt["request_id"] == request_id and receipt["counts"]["memories"] == 1
    path = tmp_path / "receipt.json"
    path.write_text(download.text)
    key = tmp_path / "key.json"
    key.write_text(json.dumps(client.get("/v1/receipts/public-key").json()))
    assert offline.verify_file(path, str(key)).ok
    tampered = {**receipt, "counts": {**receipt["counts"], "memories": 0}}
    path.write_text(json.dumps(tampered))
    assert not offline.verify_file(path, str(key)).ok


def test_erasure_of_another_tenant_is_not_found(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    theirs = client.post("/v1/erasure-requests", json={"subject": "user:9"},
                         headers=other_tenant["app"]).json()["id"]
    sign_in(client, tenant)
    for path in (f"/console/erasures/{theirs}", f"/console/erasures/{theirs}/status",
                 f"/console/erasures/{theirs}/receipt.json"):
        assert client.get(path).status_code == 404, path
    assert theirs not in client.get("/console/erasures").text
