"""Ingestion applies the contradiction rule and the optional judge as `POST /v1/memories` does."""

from __future__ import annotations

from typing import Any

from app.ingestion import tasks
from tests.ingestion.helpers import SUBJECT, accepted, item_id
from tests.memories.helpers import created
from tests.memories.test_judge import (  # noqa: F401 (fixtures)
    AISLE,
    NEW_PHONE,
    PHONE,
    WINDOW,
    judge_server,
    use_judge,
)


def _ingest(client: Any, tenant: dict[str, Any], key: str, text: str) -> str:
    operation_id = accepted(client, tenant["app"], key,
                            {"subject": SUBJECT, "memories": [{"text": text}]})
    tasks.apply_ingestion(operation_id, tenant["id"])
    return item_id(operation_id, 0)


def _read(client: Any, tenant: dict[str, Any], memory_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/memories/{memory_id}",
                                      headers=tenant["app"]).json()
    return body


def test_an_ingested_memory_that_contradicts_a_live_one_marks_it_suspect(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    old = created(client, tenant["app"], subject=SUBJECT, text=PHONE)
    new = _ingest(client, tenant, "phone-1", NEW_PHONE)
    read = _read(client, tenant, old["id"])
    assert (read["state"], read["flags"]) == ("suspect", ["contradicted"])
    assert _read(client, tenant, new)["state"] == "active"
    reason = owner_conn.execute("SELECT reason FROM audit_event WHERE target_id = %s "
                                "AND to_state = 'suspect'", (old["id"],)).fetchone()[0]
    assert reason.startswith(f"contradicted by {new} (")


def test_ingestion_asks_the_judge_about_borderline_pairs_holding_no_connection(
    client: Any, tenant: dict[str, Any], use_judge: Any, owner_conn: Any  # noqa: F811
) -> None:
    server = use_judge("contradiction")
    old = created(client, tenant["app"], subject=SUBJECT, text=AISLE)
    new = _ingest(client, tenant, "seats-1", WINDOW)
    [request] = server.requests
    assert AISLE in request["messages"][-1]["content"]
    assert WINDOW in request["messages"][-1]["content"]
    assert server.checked_out == [0]
    read = _read(client, tenant, old["id"])
    assert (read["state"], read["flags"]) == ("suspect", ["contradicted"])
    reason = owner_conn.execute("SELECT reason FROM audit_event WHERE target_id = %s "
                                "AND to_state = 'suspect'", (old["id"],)).fetchone()[0]
    assert reason == f"contradicted by {new} (judge)"


def test_without_a_judge_an_unsure_pair_stays_live(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = created(client, tenant["app"], subject=SUBJECT, text=AISLE)
    _ingest(client, tenant, "seats-2", WINDOW)
    assert _read(client, tenant, old["id"])["state"] == "active"
