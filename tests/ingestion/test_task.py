"""`ingestion.apply` called directly: applies once, redeliveries change nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import exc as sa_exc

from app.idempotency import tasks as idempotency_tasks
from app.ingestion import tasks
from tests.ingestion.helpers import (
    SUBJECT,
    accepted,
    item_id,
    memory_ids,
    operation,
    operation_text,
    sent_for,
)

# Only the module is imported: pytest would evaluate a task object found in this module's
# namespace while collecting, configuring Celery before the database fixture has run.

BEES = "Keeps bees on the roof in Porto."
OBOE = "Plays the oboe in a quartet."


def _body(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"subject": SUBJECT, "source": "conversation:3", "memories": list(items), **extra}


def _counts(owner_conn: Any) -> tuple[int, ...]:
    return tuple(owner_conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                 for table in ("memory", "memory_version", "audit_event", "provenance_edge"))


def _recalled(client: Any, headers: dict[str, str], query: str) -> list[str]:
    response = client.post("/v1/recall", json={"subject": SUBJECT, "query": query},
                        headers=headers)
    assert response.status_code == 200, response.text
    return [r["memory"]["id"] for r in response.json()["results"]]


def _listed(client: Any, headers: dict[str, str]) -> list[str]:
    return [m["id"] for m in client.get(f"/v1/memories?subject={SUBJECT}",
                                     headers=headers).json()["data"]]


def _stays_forgotten(client: Any, headers: dict[str, str], memory_id: str) -> None:
    assert client.get(f"/v1/memories/{memory_id}", headers=headers).status_code == 404
    assert memory_id not in _listed(client, headers)
    assert memory_id not in _recalled(client, headers, "bees on the roof")


def test_the_task_applies_every_item_and_succeeds(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "apply-1",
                            _body({"text": BEES}, {"text": OBOE, "source": "conversation:4",
                                                   "volatility": "structural"}))
    tasks.apply_ingestion(operation_id, tenant["id"])
    expected = [item_id(operation_id, 0), item_id(operation_id, 1)]
    read = client.get(f"/v1/operations/{operation_id}", headers=tenant["app"]).json()
    assert read["status"] == "succeeded" and read["error"] is None
    assert read["result"] == {"memory_ids": expected, "forgotten": [], "refused": [],
                              "forget_requests": []}
    bees = client.get(f"/v1/memories/{expected[0]}", headers=tenant["app"]).json()
    assert (bees["subject"], bees["text"], bees["source"]) == (SUBJECT, BEES, "conversation:3")
    oboe = client.get(f"/v1/memories/{expected[1]}", headers=tenant["app"]).json()
    assert (oboe["source"], oboe["volatility"]) == ("conversation:4", "structural")
    assert expected[0] in _recalled(client, tenant["app"], "bees on the roof")
    # Applied items leave no text behind in the operation record.
    assert operation(owner_conn, operation_id)["request_payload"] is None
    assert "bees" not in operation_text(owner_conn) and "oboe" not in operation_text(owner_conn)


def test_running_the_task_twice_changes_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "twice", _body({"text": BEES}, {"text": OBOE}))
    tasks.apply_ingestion(operation_id, tenant["id"])
    first, counts = operation(owner_conn, operation_id), _counts(owner_conn)
    tasks.apply_ingestion(operation_id, tenant["id"])
    tasks.apply_ingestion(operation_id, tenant["id"])
    assert operation(owner_conn, operation_id) == first
    assert _counts(owner_conn) == counts
    assert len(memory_ids(owner_conn, tenant["id"])) == 2


def test_the_task_does_nothing_for_another_tenant(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "tenant", _body({"text": BEES}))
    tasks.apply_ingestion(operation_id, other_tenant["id"])
    assert operation(owner_conn, operation_id)["status"] == "queued"
    assert memory_ids(owner_conn, tenant["id"]) == memory_ids(owner_conn, other_tenant["id"]) == []


def test_an_item_citing_an_excluded_source_is_refused_and_the_rest_applied(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    excluded = client.post("/v1/sources/exclusions", json={"source": "chat:leaked"},
                        headers=tenant["app"])
    assert excluded.status_code == 201
    operation_id = accepted(client, tenant["app"], "excluded", _body(
        {"text": BEES}, {"text": "Was diagnosed with gout.", "source": "chat:leaked"},
        {"text": OBOE}))
    tasks.apply_ingestion(operation_id, tenant["id"])
    result = operation(owner_conn, operation_id)["result"]
    assert result["memory_ids"] == [item_id(operation_id, 0), item_id(operation_id, 2)]
    assert result["refused"] == [{"item": 1, "type": "source-excluded", "status": 409}]
    assert client.get(f"/v1/memories/{item_id(operation_id, 1)}",
                   headers=tenant["app"]).status_code == 404
    assert "gout" not in operation_text(owner_conn)
    trail = client.get("/v1/audit?source=chat:leaked&action=write.refused",
                       headers=tenant["compliance"]).json()["data"]
    assert len(trail) == 1  # audited by the source's keyed digest, never its name
    assert "chat:leaked" not in repr(owner_conn.execute("SELECT * FROM audit_event").fetchall())


@pytest.mark.timeout(120)
def test_a_refusal_after_a_supersession_in_the_same_ingestion_does_not_hang(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    # The supersession audits (taking the tenant's chain lock) before the refusal is audited.
    old = client.post("/v1/memories", json={"subject": SUBJECT, "text": "Lives in Lisbon."},
                   headers=tenant["app"]).json()["id"]
    client.post("/v1/sources/exclusions", json={"source": "chat:leaked"}, headers=tenant["app"])
    operation_id = accepted(client, tenant["app"], "supersede", _body(
        {"text": "Lives in Porto.", "supersedes": [old]},
        {"text": "Was diagnosed with gout.", "source": "chat:leaked"}))
    tasks.apply_ingestion(operation_id, tenant["id"])
    result = operation(owner_conn, operation_id)["result"]
    assert result["memory_ids"] == [item_id(operation_id, 0)]
    assert result["refused"] == [{"item": 1, "type": "source-excluded", "status": 409}]
    old_state = client.get(f"/v1/memories/{old}", headers=tenant["app"]).json()
    assert old_state["state"] == "deprecated"
    assert old_state["superseded_by"] == item_id(operation_id, 0)


def test_an_item_with_a_bad_reference_is_refused_and_the_rest_applied(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "bad-ref", _body(
        {"text": BEES}, {"text": OBOE, "supersedes": [str(uuid.uuid4())]}))
    tasks.apply_ingestion(operation_id, tenant["id"])
    stored = operation(owner_conn, operation_id)
    assert stored["status"] == "succeeded"
    assert stored["result"]["memory_ids"] == [item_id(operation_id, 0)]
    assert stored["result"]["refused"] == [{"item": 1, "type": "invalid-reference",
                                            "status": 422}]
    assert memory_ids(owner_conn, tenant["id"]) == [item_id(operation_id, 0)]


def test_a_slot_item_keeps_the_fields_it_does_not_name(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    slot = client.post("/v1/memories", json={"subject": SUBJECT, "key": "home", "text": "Lisbon",
                                          "volatility": "structural"},
                    headers=tenant["app"]).json()
    operation_id = accepted(client, tenant["app"], "slot",
                            {"subject": SUBJECT, "memories": [{"key": "home", "text": "Porto"}]})
    tasks.apply_ingestion(operation_id, tenant["id"])
    assert operation(owner_conn, operation_id)["result"]["memory_ids"] == [slot["id"]]
    now = client.get(f"/v1/memories/{slot['id']}", headers=tenant["app"]).json()
    assert (now["text"], now["volatility"], now["revision"]) == ("Porto", "structural", 2)


MESSAGES = [
    {"role": "user", "content": "Please forget that I collect sneakers."},
    {"role": "assistant", "content": "I'll forget that you collect sneakers."},
    {"role": "user", "content": "Don't forget my dentist appointment on Friday."},
    {"role": "system", "content": "Please forget that I am a system prompt about cats."},
    {"role": "user", "content": "Hey, could you forget my old address in Leeds?"},
]


def test_user_forget_requests_are_carried_out_when_the_tenant_detects_them(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    patched = client.patch("/v1/settings", json={"detect_forget_requests": True},
                           headers=tenant["compliance"])
    assert patched.status_code == 200
    sneakers = client.post("/v1/memories", json={"subject": SUBJECT,
                                                 "text": "I collect rare sneakers."},
                           headers=tenant["app"]).json()
    operation_id = accepted(client, tenant["app"], "forget-on",
                            {"subject": SUBJECT, "messages": MESSAGES})
    tasks.apply_ingestion(operation_id, tenant["id"])
    result = operation(owner_conn, operation_id)["result"]
    asked = [(r["message"], r["forgotten"], r["unresolved"]) for r in result["forget_requests"]]
    assert asked == [(0, [sneakers["id"]], False), (4, [], True)]
    assert all(r["retraction_id"] for r in result["forget_requests"])
    assert client.get(f"/v1/memories/{sneakers['id']}", headers=tenant["app"]).status_code == 404
    retracted = client.post("/v1/recall", json={"subject": SUBJECT, "query": "sneakers"},
                            headers=tenant["app"]).json()["retractions"]
    assert sorted(r["about"] for r in retracted) == ["my old address in Leeds",
                                                      "that I collect sneakers"]
    assert result["memory_ids"] == []
    assert operation(owner_conn, operation_id)["request_payload"] is None
    assert "dentist" not in operation_text(owner_conn)
    assert "sneakers" not in operation_text(owner_conn)
    before = owner_conn.execute("SELECT count(*) FROM retraction").fetchone()[0]
    tasks.apply_ingestion(operation_id, tenant["id"])  # a redelivery forgets nothing more
    assert owner_conn.execute("SELECT count(*) FROM retraction").fetchone()[0] == before


def test_forget_requests_are_not_scanned_when_the_tenant_has_it_off(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "forget-off",
                            {"subject": SUBJECT, "messages": MESSAGES})
    tasks.apply_ingestion(operation_id, tenant["id"])
    stored = operation(owner_conn, operation_id)
    assert stored["status"] == "succeeded"
    assert stored["result"]["forget_requests"] == []


def test_a_redelivery_after_a_forget_does_not_resurrect(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "forget-1", _body({"text": BEES},
                                                                  {"text": OBOE}))
    tasks.apply_ingestion(operation_id, tenant["id"])
    bees = item_id(operation_id, 0)
    assert client.delete(f"/v1/memories/{bees}", headers=tenant["app"]).status_code == 204
    counts = _counts(owner_conn)
    tasks.apply_ingestion(operation_id, tenant["id"])
    _stays_forgotten(client, tenant["app"], bees)
    assert _counts(owner_conn) == counts


def test_a_redelivery_after_the_operation_was_pruned_does_not_resurrect(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    body = _body({"text": BEES}, {"text": OBOE})
    operation_id = accepted(client, tenant["app"], "pruned", body)
    tasks.apply_ingestion(operation_id, tenant["id"])
    first = operation(owner_conn, operation_id)["result"]
    bees, oboe = item_id(operation_id, 0), item_id(operation_id, 1)
    # Forgetting also excludes the ingestion's source: its other item must still be answered.
    assert client.delete(f"/v1/memories/{bees}", headers=tenant["app"]).status_code == 204
    oboe_before = client.get(f"/v1/memories/{oboe}", headers=tenant["app"]).json()
    owner_conn.execute("DELETE FROM operation WHERE id = %s", (operation_id,))
    counts = _counts(owner_conn)

    again = accepted(client, tenant["app"], "pruned", body)
    assert again == operation_id, "the key derives the same operation ID"
    tasks.apply_ingestion(again, tenant["id"])

    second = operation(owner_conn, again)["result"]
    assert second["memory_ids"] == first["memory_ids"]
    assert second["forgotten"] == [bees] and second["refused"] == []
    _stays_forgotten(client, tenant["app"], bees)
    assert client.get(f"/v1/memories/{oboe}", headers=tenant["app"]).json() == oboe_before
    # One more audit event (this ingestion's), nothing else.
    memories, versions, events, edges = _counts(owner_conn)
    assert (memories, versions, edges) == (counts[0], counts[1], counts[3])
    assert events == counts[2] + 1
    assert "bees" not in operation_text(owner_conn)


def test_an_unexpected_error_fails_the_operation_without_content(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "broken", _body({"text": BEES}))
    owner_conn.execute(
        """UPDATE operation SET request_payload = '{"subject": "user:7", "memories": 3,
           "secret": "Keeps bees"}' WHERE id = %s""", (operation_id,))
    tasks.apply_ingestion(operation_id, tenant["id"])
    stored = operation(owner_conn, operation_id)
    assert stored["status"] == "failed"
    assert stored["error"]["type"] == "https://lethe.dev/problems/ingestion-failed"
    assert stored["error"]["detail"]
    assert stored["request_payload"] is None and stored["result"] is None
    assert "bees" not in operation_text(owner_conn).lower()
    # A redelivery of a failed operation changes nothing either.
    tasks.apply_ingestion(operation_id, tenant["id"])
    assert operation(owner_conn, operation_id) == stored
    read = client.get(f"/v1/operations/{operation_id}", headers=tenant["app"]).json()
    assert read["status"] == "failed" and read["error"] == stored["error"]


def test_only_database_errors_that_may_pass_are_retried() -> None:
    assert tasks.is_transient(sa_exc.OperationalError("SELECT 1", {}, Exception("gone")))
    assert tasks.is_transient(sa_exc.TimeoutError())
    assert not tasks.is_transient(sa_exc.IntegrityError("INSERT", {}, Exception("dup")))
    assert not tasks.is_transient(ValueError("bad payload"))


def test_pending_jobs_of_every_kind_left_alone_too_long_are_sent_again(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    """A job whose send after commit failed (broker down) is sent again by the sweep:
    ingestions and the other accepted jobs alike; a finished or a fresh one is not."""
    stale = accepted(client, tenant["app"], "stale", _body({"text": BEES}))
    fresh = accepted(client, tenant["app"], "fresh", _body({"text": OBOE}))
    done = accepted(client, tenant["app"], "done", _body({"text": "Speaks Basque."}))
    tasks.apply_ingestion(done, tenant["id"])
    decay = client.post("/v1/maintenance/decay", headers=tenant["compliance"])
    assert decay.status_code == 202, decay.text
    maintenance = decay.json()["operation_id"]
    owner_conn.execute("UPDATE operation SET updated_at = now() - interval '1 hour' "
                       "WHERE id IN (%s, %s, %s)", (stale, done, maintenance))
    assert idempotency_tasks.requeue_stale_jobs() == 2
    assert (sent_for(owner_conn, stale), sent_for(owner_conn, fresh),
            sent_for(owner_conn, done)) == (2, 1, 1)
    assert sent_for(owner_conn, maintenance, task="maintenance.run") == 2
