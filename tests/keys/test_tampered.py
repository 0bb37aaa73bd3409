"""A stored ciphertext altered on disk is refused, never shown: the API answers 500
problem+json of type `sealed-value-rejected` (the console a 500 page), and the log says
which value failed (table, column, row ID), never its subject or its text."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.console.records_support import sign_in

TEXT = "Hides the spare key under the blue heron"
SUBJECT = "user:tamper-7"


def _flip_a_byte(owner_conn: Any, memory_id: str) -> str:
    """One bit of the memory's current text flipped in its stored ciphertext (past the
    generation and nonce, inside the encrypted text); the version's ID."""
    version_id: str = owner_conn.execute(
        "UPDATE memory_version v SET sealed_text = set_byte(v.sealed_text, 20,"
        " get_byte(v.sealed_text, 20) # 1) FROM memory m"
        " WHERE m.id = %s AND v.id = m.current_version_id RETURNING v.id::text",
        (memory_id,)).fetchone()[0]
    return version_id


def _assert_rejected(response: Any) -> None:
    assert response.status_code == 500, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["type"].endswith("/sealed-value-rejected") and body["status"] == 500
    assert TEXT not in response.text and SUBJECT not in response.text


def test_a_tampered_text_is_refused_as_a_problem_and_logged_by_where_it_is(
    client: Any, store_folder: Any, tenant: dict[str, Any], owner_conn: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = tenant["app"]
    written = client.post("/v1/memories", json={"subject": SUBJECT, "text": TEXT}, headers=app)
    assert written.status_code == 201, written.text
    memory_id = written.json()["id"]
    version_id = _flip_a_byte(owner_conn, memory_id)

    with caplog.at_level(logging.ERROR):
        _assert_rejected(client.get(f"/v1/memories/{memory_id}", headers=app))
        _assert_rejected(client.get(f"/v1/memories/{memory_id}/versions", headers=app))
        _assert_rejected(client.post("/v1/recall", json={"subject": SUBJECT,
                                                         "query": "where is the spare key"},
                                     headers=app))
    refusals = [record for record in caplog.records
                if record.getMessage() == "refused: sealed-value-rejected"]
    assert len(refusals) == 3
    for record in refusals:
        reason = record.fields["reason"]  # type: ignore[attr-defined]
        assert reason == f"sealed value does not authenticate: memory_version.text of " \
                         f"{version_id}"
    logged = "\n".join(f"{record.getMessage()} {getattr(record, 'fields', '')}"
                       for record in caplog.records)
    assert TEXT not in logged and SUBJECT not in logged
    assert "unhandled error" not in logged

    sign_in(client, tenant)
    page = client.get(f"/console/memories/{memory_id}")
    assert page.status_code == 500
    assert "A stored value was rejected" in page.text and TEXT not in page.text
