"""Explicit expiry (`expires_at`): left out of recall and live listings from the instant
itself, with no job; the expiry job then deprecates it (flag `expired`), audited; PATCH sets,
moves and clears it; a time in the past is refused; an expired memory is not revived by an
edit that leaves its expiry. The real clock: each test writes a time a little ahead and
waits for it."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from app.core import uow
from app.core.models import utcnow
from app.forgetting import expiry
from app.forgetting import tasks as forgetting_tasks
from app.forgetting.batches import expiry_batch
from tests.memories.helpers import created

SUBJECT = "user:expiry"
AHEAD = timedelta(seconds=3)


def _soon() -> datetime:
    return datetime.now(UTC) + AHEAD


def _wait_past(instant: datetime) -> None:
    time.sleep(max(0.0, (instant - datetime.now(UTC)).total_seconds()) + 0.05)


def _recalled(client: Any, headers: dict[str, str], query: str) -> list[str]:
    response = client.post("/v1/recall", json={"subject": SUBJECT, "query": query},
                           headers=headers)
    assert response.status_code == 200, response.text
    return [r["memory"]["id"] for r in response.json()["results"]]


def _listed(client: Any, headers: dict[str, str], **filters: str) -> list[str]:
    response = client.get("/v1/memories", params={"subject": SUBJECT, **filters},
                          headers=headers)
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()["data"]]


def test_left_out_of_recall_and_listings_at_the_instant(
    client: Any, tenant: dict[str, Any]
) -> None:
    h = tenant["app"]
    until = _soon()
    promo = created(client, h, subject=SUBJECT, text="The promo code SPRING24 is valid.",
                    expires_at=until.isoformat())
    lasting = created(client, h, subject=SUBJECT, text="The promo code list is on the wiki.")
    assert datetime.fromisoformat(promo["expires_at"]) == until
    assert lasting["expires_at"] is None
    assert promo["id"] in _recalled(client, h, "promo code")
    assert promo["id"] in _listed(client, h)
    _wait_past(until)
    # No job has run: the instant alone takes it out; its non-expiring sibling stays.
    assert _recalled(client, h, "promo code") == [lasting["id"]]
    assert _listed(client, h) == [lasting["id"]]
    assert _listed(client, h, state="active") == [lasting["id"]]
    shown = client.get(f"/v1/memories/{promo['id']}", headers=h).json()
    assert shown["state"] == "active" and shown["expires_at"] is not None


def test_a_time_in_the_past_is_refused(client: Any, tenant: dict[str, Any]) -> None:
    h = tenant["app"]
    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    response = client.post("/v1/memories", json={"subject": SUBJECT, "text": "Gone already.",
                                                  "expires_at": past}, headers=h)
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["type"].endswith("expiry-in-past")
    memory = created(client, h, subject=SUBJECT, text="Works at the Lisbon office.")
    patched = client.patch(f"/v1/memories/{memory['id']}", json={"expires_at": past},
                           headers={**h, "If-Match": '"1"'})
    assert patched.status_code == 422
    assert patched.headers["content-type"].startswith("application/problem+json")
    assert client.get(f"/v1/memories/{memory['id']}", headers=h).json()["revision"] == 1


def test_patch_sets_moves_and_clears(client: Any, tenant: dict[str, Any]) -> None:
    h = tenant["app"]
    memory = created(client, h, subject=SUBJECT, text="Is in Tokyo on a work trip.")
    until = _soon()
    set_ = client.patch(f"/v1/memories/{memory['id']}", json={"expires_at": until.isoformat()},
                        headers={**h, "If-Match": '"1"'})
    assert set_.status_code == 200, set_.text
    assert datetime.fromisoformat(set_.json()["expires_at"]) == until
    later = until + timedelta(days=1)
    moved = client.patch(f"/v1/memories/{memory['id']}", json={"expires_at": later.isoformat()},
                         headers={**h, "If-Match": '"2"'})
    assert datetime.fromisoformat(moved.json()["expires_at"]) == later
    _wait_past(until)
    assert _recalled(client, h, "Tokyo trip") == [memory["id"]]  # moved: still true
    cleared = client.patch(f"/v1/memories/{memory['id']}", json={"expires_at": None},
                           headers={**h, "If-Match": '"3"'})
    assert cleared.status_code == 200 and cleared.json()["expires_at"] is None
    events = client.get("/v1/audit", params={"target_id": memory["id"]},
                        headers=tenant["compliance"]).json()["data"]
    corrected = [e for e in events if e["action"] == "memory.corrected"]
    assert [e["details"]["fields"] for e in corrected] == [["expires_at"]] * 3


def test_an_expired_memory_is_not_revived_by_an_edit_that_leaves_its_expiry(
    client: Any, tenant: dict[str, Any]
) -> None:
    h = tenant["app"]
    until = _soon()
    memory = created(client, h, subject=SUBJECT, text="Is in Tokyo until the 12th.",
                     expires_at=until.isoformat())
    _wait_past(until)
    edited = client.patch(f"/v1/memories/{memory['id']}", json={"text": "Is in Kyoto."},
                          headers={**h, "If-Match": '"1"'})
    assert edited.status_code == 409
    assert edited.json()["type"].endswith("memory-expired")
    reverted = client.post(f"/v1/memories/{memory['id']}/revert", json={"seq": 1},
                           headers={**h, "If-Match": '"1"'})
    assert reverted.status_code == 409
    assert _recalled(client, h, "Tokyo") == []
    # Moving the expiry with the correction is the explicit way back.
    revived = client.patch(
        f"/v1/memories/{memory['id']}",
        json={"text": "Is in Tokyo until the 20th.",
              "expires_at": (datetime.now(UTC) + timedelta(days=8)).isoformat()},
        headers={**h, "If-Match": '"1"'})
    assert revived.status_code == 200, revived.text
    assert _recalled(client, h, "Tokyo") == [memory["id"]]


def test_a_write_to_an_expired_slot_deprecates_it_and_takes_the_slot(
    client: Any, tenant: dict[str, Any]
) -> None:
    h = tenant["app"]
    until = _soon()
    old = created(client, h, subject=SUBJECT, key="city", text="Lives in Tokyo for now.",
                  expires_at=until.isoformat())
    _wait_past(until)
    new = created(client, h, subject=SUBJECT, key="city", text="Lives in Lisbon.")
    assert new["id"] != old["id"]  # a new memory, not a new version of the expired one
    shown = client.get(f"/v1/memories/{old['id']}", headers=h).json()
    assert (shown["state"], shown["flags"]) == ("deprecated", ["expired"])
    assert _recalled(client, h, "Where does the user live?") == [new["id"]]


def test_an_expired_memory_is_not_contradicted(client: Any, tenant: dict[str, Any]) -> None:
    h = tenant["app"]
    until = _soon()
    old = created(client, h, subject=SUBJECT, text="Her favourite colour is green.",
                  expires_at=until.isoformat())
    _wait_past(until)
    new = created(client, h, subject=SUBJECT, text="Her favourite colour is blue.")
    assert new["effects"]["suspected"] == []
    assert client.get(f"/v1/memories/{old['id']}", headers=h).json()["state"] == "active"


def test_the_expiry_job_deprecates_with_flag_expired_audited(
    client: Any, tenant: dict[str, Any]
) -> None:
    h, tenant_id = tenant["app"], uuid.UUID(tenant["id"])
    soon = created(client, h, subject=SUBJECT, text="Promo A is valid.",
                   expires_at=(utcnow() + timedelta(hours=1)).isoformat())
    later = created(client, h, subject=SUBJECT, text="Promo B is valid.",
                    expires_at=(utcnow() + timedelta(days=2)).isoformat())
    created(client, h, subject=SUBJECT, text="Promo C never ends.")
    # The job's clock is a parameter, as decay's: an hour and a second from now.
    with uow.unit_of_work(tenant_id) as session:
        moved = expiry.expire(session, tenant_id=tenant_id,
                              now=utcnow() + timedelta(hours=1, seconds=1))
    assert moved == [soon["id"]]
    with uow.unit_of_work(tenant_id) as session:  # a rerun moves nothing twice
        assert expiry_batch(session, tenant_id=tenant_id, now=utcnow() + timedelta(hours=2),
                            size=10).moved == {"expired": []}
    shown = client.get(f"/v1/memories/{soon['id']}", headers=h).json()
    assert (shown["state"], shown["flags"]) == ("deprecated", ["expired"])
    assert client.get(f"/v1/memories/{later['id']}", headers=h).json()["state"] == "active"
    events = client.get("/v1/audit", params={"target_id": soon["id"]},
                        headers=tenant["compliance"]).json()["data"]
    [moved_event] = [e for e in events if e["action"] == "memory.transition"]
    assert (moved_event["from_state"], moved_event["to_state"]) == ("active", "deprecated")
    assert moved_event["reason"] == "expired" and moved_event["actor"] == expiry.ACTOR
    # Beat's task runs it for every tenant with the real clock.
    until = _soon()
    due = created(client, h, subject=SUBJECT, text="Promo D ends now.",
                  expires_at=until.isoformat())
    _wait_past(until)
    assert forgetting_tasks.expire_all() == 1
    assert client.get(f"/v1/memories/{due['id']}", headers=h).json()["state"] == "deprecated"


def test_batch_writes_take_an_expiry(client: Any, tenant: dict[str, Any]) -> None:
    h = tenant["app"]
    until = _soon()
    response = client.post("/v1/memories/batch", json={"memories": [
        {"subject": SUBJECT, "text": "The sale on boots ends soon.",
         "expires_at": until.isoformat()},
        {"subject": SUBJECT, "text": "The boots come in brown.", "key": "boots"},
        {"subject": SUBJECT, "text": "Past already.",
         "expires_at": (datetime.now(UTC) - timedelta(seconds=5)).isoformat()},
    ]}, headers=h)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 201, 422]
    assert results[2]["error"]["type"].endswith("/expiry-in-past")
    expiring, lasting = results[0]["memory"]["id"], results[1]["memory"]["id"]
    assert set(_recalled(client, h, "boots")) == {expiring, lasting}
    _wait_past(until)
    assert _recalled(client, h, "boots") == [lasting]
