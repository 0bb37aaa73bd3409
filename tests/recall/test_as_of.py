"""Point-in-time recall (`as_of`) and `GET /v1/memories/{id}?as_of=`: the answer Lethe would
have given at that instant, replayed from the audit trail; forgotten content never returns;
another tenant's memories never appear."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.memories.helpers import created

SUBJECT = "user:as-of"


def _mark() -> datetime:
    """An instant strictly between what was done before and what is done after."""
    time.sleep(0.02)
    instant = datetime.now(UTC)
    time.sleep(0.02)
    return instant


def _recall(client: Any, headers: dict[str, str], query: str,
            as_of: datetime | None = None, subject: str = SUBJECT) -> dict[str, Any]:
    body: dict[str, Any] = {"subject": subject, "query": query}
    if as_of is not None:
        body["as_of"] = as_of.isoformat()
    response = client.post("/v1/recall", json=body, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _texts(answer: dict[str, Any]) -> list[str]:
    return [r["memory"]["text"] for r in answer["results"]]


def _read(client: Any, headers: dict[str, str], memory_id: str, as_of: datetime) -> Any:
    return client.get(f"/v1/memories/{memory_id}", params={"as_of": as_of.isoformat()},
                      headers=headers)


def test_before_and_after_a_correction_and_a_revert(client: Any, tenant: dict[str, Any]) -> None:
    h = tenant["app"]
    before = _mark()
    memory = created(client, h, subject=SUBJECT, text="Lives in Lisbon.")
    first = _mark()
    client.patch(f"/v1/memories/{memory['id']}", json={"text": "Lives in Porto."},
                 headers={**h, "If-Match": '"1"'}).raise_for_status()
    corrected = _mark()
    client.post(f"/v1/memories/{memory['id']}/revert", json={"seq": 1},
                headers={**h, "If-Match": '"2"'}).raise_for_status()
    assert _texts(_recall(client, h, "where does the user live", before)) == []
    assert _texts(_recall(client, h, "where does the user live", first)) == ["Lives in Lisbon."]
    assert _texts(_recall(client, h, "where does the user live", corrected)) == [
        "Lives in Porto."]
    assert _texts(_recall(client, h, "where does the user live")) == ["Lives in Lisbon."]
    assert _read(client, h, memory["id"], before).status_code == 404
    then = _read(client, h, memory["id"], first).json()
    assert (then["text"], then["version"]["seq"], then["revision"]) == ("Lives in Lisbon.", 1, 1)
    then = _read(client, h, memory["id"], corrected).json()
    assert (then["text"], then["version"]["seq"], then["revision"]) == ("Lives in Porto.", 2, 2)
    now = _read(client, h, memory["id"], datetime.now(UTC)).json()
    assert (now["text"], now["version"]["seq"], now["revision"]) == ("Lives in Lisbon.", 1, 3)


def test_before_and_after_a_supersession(client: Any, tenant: dict[str, Any]) -> None:
    h = tenant["app"]
    old = created(client, h, subject=SUBJECT, text="Works as a nurse in Lisbon.")
    before = _mark()
    new = created(client, h, subject=SUBJECT, text="Works as a doctor in Porto.",
                  supersedes=[old["id"]])
    after = _mark()
    then = _recall(client, h, "what is the user's job", before)
    assert [(r["memory"]["id"], r["memory"]["state"]) for r in then["results"]] == [
        (old["id"], "active")]
    now = _recall(client, h, "what is the user's job", after)
    assert [r["memory"]["id"] for r in now["results"]] == [new["id"]]
    assert [m["id"] for m in now["results"][0]["history"]] == [old["id"]]
    was = _read(client, h, old["id"], before).json()
    assert (was["state"], was["superseded_by"]) == ("active", None)
    assert _read(client, h, old["id"], after).json()["state"] == "deprecated"


def test_before_and_after_a_quarantine_and_a_release(
    client: Any, tenant: dict[str, Any]
) -> None:
    h, officer = tenant["app"], tenant["compliance"]
    memory = created(client, h, subject=SUBJECT, text="Plays the cello on Sundays.")
    before = _mark()
    client.post(f"/v1/memories/{memory['id']}/quarantine",
                headers=officer).raise_for_status()
    quarantined = _mark()
    client.post(f"/v1/memories/{memory['id']}/release", headers=officer).raise_for_status()
    released = _mark()
    assert _texts(_recall(client, h, "cello", before)) == ["Plays the cello on Sundays."]
    assert _texts(_recall(client, h, "cello", quarantined)) == []
    assert _texts(_recall(client, h, "cello", released)) == ["Plays the cello on Sundays."]
    assert _read(client, h, memory["id"], quarantined).json()["state"] == "quarantined"
    assert _read(client, h, memory["id"], released).json()["state"] == "active"


def test_a_contradiction_shows_the_flags_of_then(client: Any, tenant: dict[str, Any]) -> None:
    h = tenant["app"]
    old = created(client, h, subject=SUBJECT, text="Her favourite colour is green.")
    before = _mark()
    created(client, h, subject=SUBJECT, text="Her favourite colour is blue.")
    after = _mark()
    assert _read(client, h, old["id"], before).json()["flags"] == []
    was = _read(client, h, old["id"], after).json()
    if was["state"] == "suspect":  # the contradiction rule flagged it
        assert was["flags"] == ["contradicted"]
        current = client.get(f"/v1/memories/{old['id']}", headers=h).json()
        assert current["flags"] == was["flags"]


def test_before_a_forget_shows_nothing_of_the_forgotten_memory(
    client: Any, tenant: dict[str, Any]
) -> None:
    h = tenant["app"]
    secret = created(client, h, subject=SUBJECT, text="Collects rare sneakers.")
    kept = created(client, h, subject=SUBJECT, text="Collects vinyl records.")
    before = _mark()
    assert client.delete(f"/v1/memories/{secret['id']}", headers=h).status_code == 204
    after = _mark()
    then = _recall(client, h, "what does the user collect", before)
    assert [r["memory"]["id"] for r in then["results"]] == [kept["id"]]
    assert "sneakers" not in str(then)
    assert then["retractions"] == []  # filed after that instant
    now = _recall(client, h, "what does the user collect", after)
    assert len(now["retractions"]) == 1
    assert _read(client, h, secret["id"], before).status_code == 404


def test_written_after_and_expired_by_then_are_absent(
    client: Any, tenant: dict[str, Any]
) -> None:
    h = tenant["app"]
    until = datetime.now(UTC) + timedelta(seconds=3)
    promo = created(client, h, subject=SUBJECT, text="The promo code SPRING24 is valid.",
                    expires_at=until.isoformat())
    before = _mark()
    created(client, h, subject=SUBJECT, text="The promo code AUTUMN25 is valid.")
    time.sleep(max(0.0, (until - datetime.now(UTC)).total_seconds()) + 0.05)
    assert _texts(_recall(client, h, "promo code", before)) == [promo["text"]]
    assert _texts(_recall(client, h, "promo code", datetime.now(UTC))) == [
        "The promo code AUTUMN25 is valid."]
    # A moment the memory existed but had expired: absent, as recall then answered.
    assert _texts(_recall(client, h, "promo code", until + timedelta(milliseconds=1))) == [
        "The promo code AUTUMN25 is valid."]


def test_never_crosses_tenants(client: Any, tenant: dict[str, Any],
                               other_tenant: dict[str, Any]) -> None:
    mine = created(client, tenant["app"], subject=SUBJECT, text="Lives in Lisbon.")
    after = _mark()
    assert _texts(_recall(client, other_tenant["app"], "where does the user live", after)) == []
    assert _read(client, other_tenant["app"], mine["id"], after).status_code == 404
    assert _texts(_recall(client, tenant["app"], "where does the user live", after)) == [
        "Lives in Lisbon."]
