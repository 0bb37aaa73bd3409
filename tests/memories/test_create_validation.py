from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.memories.helpers import count, created

REPLAYED = "Idempotent-Replayed"

BAD_BODIES = [
    {"subject": "user:42", "text": ""},
    {"subject": "user:42", "text": "   "},
    {"subject": "user:42", "text": "x" * 8001},
    {"subject": "user:42", "text": "x", "volatility": "eternal"},
    {"text": "x"},
    {"subject": "", "text": "x"},
    {"subject": "s" * 256, "text": "x"},
    {"subject": "user:42", "text": "x", "supersedes": ["not-a-uuid"]},
    {"subject": "user:42", "text": "x", "derived_from": ["nope"]},
    {"subject": "user:42", "text": "x", "derived_from": [str(uuid.uuid4())]},
    {"subject": "user:42", "text": "x", "supersedes": [str(uuid.uuid4())]},
    {"subject": "user:42", "text": "x", "depends_on": {"a": 1}},
    {"subject": "user:42", "text": "x", "unknown": True},
    {"subject": 42, "text": "x"},
]


@pytest.mark.parametrize("body", BAD_BODIES)
def test_bad_create_is_422_and_stores_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any, body: dict[str, Any]
) -> None:
    response = client.post("/v1/memories", json=body, headers=tenant["app"])
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    for table in ("memory", "memory_version", "provenance_edge"):
        assert count(owner_conn, table) == 0


def test_text_of_exactly_8000_chars_is_accepted(client: Any, tenant: dict[str, Any]) -> None:
    assert created(client, tenant["app"], text="y" * 8000)["text"] == "y" * 8000


def test_idempotent_create_replays_the_same_memory(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    headers = {**tenant["app"], "Idempotency-Key": "create-1"}
    body = {"subject": "user:42", "text": "Has two cats.", "source": "chat:5"}
    first = client.post("/v1/memories", json=body, headers=headers)
    assert first.status_code == 201
    assert REPLAYED not in first.headers
    replay = client.post("/v1/memories", json=body, headers=headers)
    assert replay.status_code == 201
    assert replay.headers[REPLAYED] == "true"
    assert replay.json() == first.json()
    assert replay.headers["ETag"] == first.headers["ETag"]
    assert count(owner_conn, "memory") == 1
    assert count(owner_conn, "memory_version") == 1
    assert count(owner_conn, "provenance_edge") == 1
    other = client.post("/v1/memories", json={**body, "text": "Has a cat."}, headers=headers)
    assert other.status_code == 422
    assert other.json()["type"].endswith("idempotency-key-reused")


def test_create_with_a_key_lands_on_the_derived_id(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    from app.idempotency.service import derive_id

    headers = {**tenant["app"], "Idempotency-Key": "create-2"}
    response = client.post("/v1/memories", json={"subject": "u", "text": "t"}, headers=headers)
    assert response.status_code == 201
    expected = derive_id(uuid.UUID(tenant["id"]), "create-2", "memory")
    assert response.json()["id"] == str(expected)
    # A redelivery after the operation record is gone still lands on it, storing nothing new.
    owner_conn.execute("DELETE FROM operation")
    again = client.post("/v1/memories", json={"subject": "u", "text": "t"}, headers=headers)
    assert again.status_code == 201 and again.json()["id"] == str(expected)
    assert count(owner_conn, "memory") == 1 and count(owner_conn, "memory_version") == 1
    # ...and if it was forgotten meanwhile, answers done without bringing it back.
    owner_conn.execute("DELETE FROM operation")
    owner_conn.execute("UPDATE memory SET state = 'forgotten'")
    late = client.post("/v1/memories", json={"subject": "u", "text": "t"}, headers=headers)
    assert late.status_code == 201
    assert late.json() == {"id": str(expected), "state": "forgotten"}
    assert owner_conn.execute("SELECT state FROM memory").fetchone()[0] == "forgotten"


@pytest.mark.parametrize("body", [
    {"subject": "user:42", "text": "a\u0000b"},
    {"subject": "user:\u0000", "text": "x"},
    {"subject": "user:42", "text": "x", "metadata": {"k": ["\u0000"]}},
    {"subject": "user:42", "text": "x", "depends_on": {"\u0000": "1"}},
])
def test_nul_characters_are_refused_not_crashed_on(
    client: Any, tenant: dict[str, Any], owner_conn: Any, body: dict[str, Any]
) -> None:
    assert client.post("/v1/memories", json=body, headers=tenant["app"]).status_code == 422
    assert count(owner_conn, "memory") == 0
    listed = client.get("/v1/memories", params={"subject": "a\u0000"}, headers=tenant["app"])
    assert listed.status_code == 422
