"""`POST /v1/ingest`: validation, the queued operation, replays (no worker here)."""

from __future__ import annotations

from typing import Any

import pytest

from app.ingestion.schemas import IngestMemory
from app.memories.schemas import MemoryCreate
from tests.ingestion.helpers import (
    REPLAYED,
    SUBJECT,
    accepted,
    ingest,
    operation,
    sent_for,
)

PROBLEMS = "https://lethe.dev/problems/"
BODY: dict[str, Any] = {
    "subject": SUBJECT,
    "source": "conversation:3",
    "memories": [{"text": "Keeps bees on the roof in Porto."}, {"text": "Plays the oboe."}],
    "messages": [{"role": "user", "content": "I keep bees."}],
}


def test_an_ingest_item_takes_every_field_of_a_memory_but_the_subject() -> None:
    assert set(IngestMemory.model_fields) == set(MemoryCreate.model_fields) - {"subject"}


def test_without_idempotency_key_is_400_and_stores_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    response = ingest(client, tenant["app"], None, BODY)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["type"] == PROBLEMS + "idempotency-key-required"
    assert owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 0


def test_authentication_comes_before_the_key(client: Any) -> None:
    assert ingest(client, {}, None, BODY).status_code == 401


@pytest.mark.parametrize("body", [
    {},
    {"subject": SUBJECT},
    {"subject": SUBJECT, "memories": [], "messages": []},
    {"subject": " ", "memories": [{"text": "x"}]},
    {"subject": SUBJECT, "memories": [{"text": ""}]},
    {"subject": SUBJECT, "memories": [{"text": "x" * 8001}]},
    {"subject": SUBJECT, "memories": [{"text": "x", "subject": "user:8"}]},
    {"subject": SUBJECT, "memories": [{"text": "x", "volatility": "forever"}]},
    {"subject": SUBJECT, "memories": [{"text": "x", "unknown": 1}]},
    {"subject": SUBJECT, "memories": [{"text": 3}]},
    {"subject": SUBJECT, "memories": [{"text": "x"}] * 101},
    {"subject": SUBJECT, "messages": [{"role": "robot", "content": "hi"}]},
    {"subject": SUBJECT, "messages": [{"role": "user", "content": ""}]},
    {"subject": SUBJECT, "messages": [{"role": "user", "content": "x" * 8001}]},
    {"subject": SUBJECT, "messages": [{"role": "user", "content": "hi"}] * 201},
    {"subject": SUBJECT, "messages": [{"role": "user"}]},
    {"subject": SUBJECT, "source": "", "memories": [{"text": "x"}]},
    {"subject": SUBJECT, "memories": [{"text": "x"}], "extra": True},
])
def test_invalid_bodies_are_422_and_store_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any, body: dict[str, Any]
) -> None:
    response = ingest(client, tenant["app"], "bad", body)
    assert response.status_code == 422, response.text
    assert response.json()["type"] == PROBLEMS + "validation-error"
    assert owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 0


def test_accepts_with_202_a_queued_operation_holding_the_items(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    response = ingest(client, tenant["app"], "accept-1", BODY)
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "queued"
    assert response.headers["Location"] == f"/v1/operations/{body['operation_id']}"
    stored = operation(owner_conn, body["operation_id"])
    assert stored["status"] == "queued"
    assert stored["response_status"] == 202
    # Unset fields stay unset: a slot write keeps what an item does not name.
    assert stored["request_payload"]["memories"][1] == {"text": "Plays the oboe."}
    # Stored sealed under the subject's key: neither the text nor the subject readable.
    assert set(stored["stored_payload"]) == {"sealed", "key"}
    assert "oboe" not in str(stored["stored_payload"]) and SUBJECT not in str(
        stored["stored_payload"])
    read = client.get(f"/v1/operations/{body['operation_id']}", headers=tenant["app"])
    assert read.status_code == 200
    assert read.json()["status"] == "queued" and read.json()["kind"] == "ingest"
    assert sent_for(owner_conn, body["operation_id"]) == 1
    rows = owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0]
    assert rows == 1, "the idempotency answer must be recorded into the same row"


def test_the_operation_id_is_derived_from_tenant_and_key(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    from app.ingestion.service import operation_id_for

    mine = accepted(client, tenant["app"], "same-key", BODY)
    theirs = accepted(client, other_tenant["app"], "same-key", BODY)
    assert mine != theirs
    import uuid

    assert mine == str(operation_id_for(uuid.UUID(tenant["id"]), "same-key"))
    assert client.get(f"/v1/operations/{mine}", headers=other_tenant["app"]).status_code == 404


def test_a_replay_answers_the_same_202_and_sends_no_second_task(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = ingest(client, tenant["app"], "replay-1", BODY)
    assert first.status_code == 202 and REPLAYED not in first.headers
    again = ingest(client, tenant["app"], "replay-1", BODY)
    assert again.status_code == 202
    assert again.headers[REPLAYED] == "true"
    assert again.json() == first.json()
    assert again.headers["Location"] == first.headers["Location"]
    assert owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 1
    assert sent_for(owner_conn, first.json()["operation_id"]) == 1


def test_the_same_key_with_another_body_is_refused(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    operation_id = accepted(client, tenant["app"], "reuse-1", BODY)
    other = ingest(client, tenant["app"], "reuse-1", {**BODY, "subject": "user:8"})
    assert other.status_code == 422
    assert other.json()["type"] == PROBLEMS + "idempotency-key-reused"
    assert operation(owner_conn, operation_id)["request_payload"]["subject"] == SUBJECT
    assert sent_for(owner_conn, operation_id) == 1


def test_validation_errors_do_not_echo_memory_text(client: Any, tenant: dict[str, Any]) -> None:
    response = ingest(client, tenant["app"], "echo", {"subject": SUBJECT, "memories": [
        {"text": "Secret diagnosis of lupus", "volatility": "never"}]})
    assert response.status_code == 422
    assert "lupus" not in response.text
