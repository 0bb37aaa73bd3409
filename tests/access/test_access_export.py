"""An access request's export holds everything about its subject and nothing of anyone else's
(the task called directly; tests/access/test_access_worker.py runs it through a worker)."""

from __future__ import annotations

import uuid
from typing import Any

from app.access import tasks
from app.keys import digests
from tests.access.helpers import (
    ANA,
    assert_holds_ana_only,
    download,
    request_access,
    seed,
)


def test_the_export_holds_every_memory_and_version_of_the_subject_only(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    seeded = seed(client, tenant["app"])
    request_id = request_access(client, tenant["app"])
    assert tasks.export(request_id, tenant["id"]) is True
    raw, document = download(client, tenant["app"], request_id)
    assert_holds_ana_only(raw, document, seeded)
    assert document["format"] == "lethe.access-export.v1"
    assert document["request_id"] == request_id and document["tenant_id"] == tenant["id"]

    shown = {m["id"]: m for m in document["memories"]}
    oboe = shown[seeded.oboe["id"]]
    assert oboe["key"] == "instrument" and oboe["metadata"] == {"lang": "en"}
    assert [v["current"] for v in oboe["versions"]] == [False, True]
    assert oboe["current_version_id"] == oboe["versions"][1]["id"]
    # Provenance: sources, and derivations within the subject by ID; Bob's derived memory
    # is counted, never named.
    bees = shown[seeded.bees["id"]]["provenance"]
    assert [(e["kind"], e["ref"]) for e in bees["parents"]] == [("source", "conversation:1")]
    assert [e["ref"] for e in bees["children"]] == [seeded.music["id"]]
    assert bees["children_elsewhere"] == 1 and bees["parents_elsewhere"] == 0
    music = shown[seeded.music["id"]]["provenance"]
    assert sorted(e["ref"] for e in music["parents"]) == sorted(
        [seeded.bees["id"], seeded.oboe["id"]])
    # The DELETE left a retraction record and excluded the forgotten memory's source.
    (retraction,) = document["retractions"]
    assert retraction["memory_ids"] == [seeded.forgotten["id"]]
    assert [e["source"] for e in document["source_exclusions"]] == ["conversation:3"]
    # The audit trail of Ana's memories (her forget), and of nothing else.
    targets = {event["target_id"] for event in document["audit_events"]}
    assert seeded.forgotten["id"] in targets and targets <= seeded.ana_ids
    assert document["counts"] == {"memories": 3, "forgotten": 1, "versions": 4,
                                  "retractions": 1, "source_exclusions": 1,
                                  "audit_events": len(document["audit_events"])}


def test_the_operation_keeps_a_summary_and_no_subject_data(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    seed(client, tenant["app"])
    request_id = request_access(client, tenant["app"], key="access-1")
    tasks.export(request_id, tenant["id"])
    operation = client.get(f"/v1/operations/{request_id}", headers=tenant["app"]).json()
    assert operation["status"] == "succeeded" and operation["kind"] == "access_request"
    assert operation["result"]["export"] == f"/v1/access-requests/{request_id}/export"
    assert operation["result"]["counts"]["memories"] == 3
    stored = " ".join(row[0] for row in owner_conn.execute("SELECT o::text FROM operation o"))
    for word in (ANA, "bees", "oboe", "conversation:"):
        assert word not in stored
    audited = " ".join(row[0] for row in owner_conn.execute(
        "SELECT a::text FROM audit_event a WHERE target_kind = 'access_request'"))
    assert "access.requested" in audited and "access.exported" in audited
    assert ANA not in audited
    (subject,) = owner_conn.execute("SELECT subject FROM access_export").fetchone()
    assert subject == digests.subject_digest(uuid.UUID(tenant["id"]), ANA)  # never the string


def test_a_subject_with_nothing_gets_an_empty_export(
    client: Any, tenant: dict[str, Any]
) -> None:
    seed(client, tenant["app"])
    request_id = request_access(client, tenant["app"], subject="user:nobody")
    tasks.export(request_id, tenant["id"])
    raw, document = download(client, tenant["app"], request_id)
    assert document["memories"] == [] and document["forgotten"] == []
    assert document["audit_events"] == [] and document["source_exclusions"] == []
    assert b"Porto" not in raw and ANA.encode() not in raw
