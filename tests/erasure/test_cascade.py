"""The cascade end to end, in process: nothing of the subject left in any table, everyone
else untouched; holds keep what they cover; redeliveries change nothing; interrupted
cascades finish with exact counts."""

from __future__ import annotations

from typing import Any

import pytest

from app.access import tasks as access_tasks
from app.erasure import cascade, tasks
from app.ingestion import tasks as ingestion_tasks
from app.receipts import offline
from tests.erasure.helpers import SUBJECT, file, remember, run, status
from tests.forgetting.dump import database_text

OTHER = "user:7"
# Every text of the subject and of what was derived from it; none may survive anywhere.
GONE = ("Quarry Lane", "Dunmore", "tamarind", "cashews", "Oxbridge", "Ops note",
        "Audit follow-up", "chat:4242", "Porcupine", "Zeppelin", SUBJECT)


def _recall(client: Any, headers: dict[str, str]) -> list[tuple[str, str]]:
    answer = client.post("/v1/recall", json={"subject": OTHER, "query": "what tea in the "
                                             "morning"}, headers=headers)
    assert answer.status_code == 200, answer.text
    return [(r["memory"]["id"], r["memory"]["text"]) for r in answer.json()["results"]]


def _seed(client: Any, tenant: dict[str, Any]) -> dict[str, Any]:
    app = tenant["app"]
    home = remember(client, app, SUBJECT, "Lives at 12 Quarry Lane in Dunmore",
                    source="chat:4242", key="home", metadata={"note": "Dunmore gate code"})
    current = client.get(f"/v1/memories/{home}", headers=app)
    patched = client.patch(f"/v1/memories/{home}", json={"text": "Lives at 14 Quarry Lane"},
                           headers={**app, "If-Match": current.headers["ETag"]})
    assert patched.status_code == 200, patched.text
    allergy = remember(client, app, SUBJECT, "Allergic to tamarind and cashews",
                       idempotency_key="allergy-1")
    farm = remember(client, app, SUBJECT, "Visited the Oxbridge farm last spring")
    forgot = client.post(f"/v1/memories/{farm}/forget",
                         json={"about": "the Oxbridge farm visit"}, headers=app)
    assert forgot.status_code == 200, forgot.text
    derived = remember(client, app, "team:ops", "Ops note: call back about the lane",
                       derived_from=[home])
    deeper = remember(client, app, "team:audit", "Audit follow-up on the ops note",
                      derived_from=[derived])
    artifact = client.post("/v1/artifacts", json={"kind": "summary", "ref": "row:9",
                                                  "derived_from": [allergy]}, headers=app)
    assert artifact.status_code == 201, artifact.text
    exported = client.post("/v1/access-requests", json={"subject": SUBJECT}, headers=app)
    access_tasks.export(exported.json()["operation_id"], tenant["id"])
    queued = client.post("/v1/ingest", json={
        "subject": SUBJECT, "source": "chat:4242", "memories": [{"text": "Porcupine quill"}],
        "messages": [{"role": "user", "content": "Zeppelin rides are my thing"}]},
        headers={**app, "Idempotency-Key": "ingest-pending"})
    assert queued.status_code == 202, queued.text
    tea = remember(client, app, OTHER, "Prefers green tea in the morning", source="chat:77")
    return {"home": home, "allergy": allergy, "farm": farm, "derived": derived,
            "deeper": deeper, "artifact": artifact.json()["id"], "tea": tea,
            "ingest": queued.json()["operation_id"]}


def test_after_an_erasure_no_table_holds_anything_of_the_subject(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    seeded = _seed(client, tenant)
    before = _recall(client, tenant["app"])
    tea_before = client.get(f"/v1/memories/{seeded['tea']}", headers=tenant["app"]).json()
    filed = file(client, tenant["app"], reason="user asked")
    assert filed["status"] == "pending"
    assert run(filed["id"], tenant["id"]) == "awaiting_artifacts"
    waiting = status(client, tenant["compliance"], filed["id"])
    assert waiting["progress"] == {"done": 5, "total": 5}
    erased = client.post(f"/v1/artifacts/{seeded['artifact']}/erased", headers=tenant["app"])
    assert erased.status_code == 200, erased.text
    assert tasks.settle(filed["id"], tenant["id"]) == "completed"
    tasks.vacuum(filed["id"], tenant["id"])

    done = status(client, tenant["compliance"], filed["id"])
    assert done["status"] == "completed" and done["subject"] is None
    assert done["vacuumed_at"] is not None
    receipt = done["receipt"]
    # Stored answers: the keyed create's, and the pending ingestion's 202 (sealed under the
    # subject's key, as every answer to a request about the subject is).
    assert receipt["counts"] == {
        "memories": 2, "versions": 5, "derived_memories": 2, "retractions": 1,
        "operations": 1, "idempotency_records": 2, "artifacts": 1, "source_exclusions": 1,
        "access_exports": 1}
    assert set(receipt["tombstoned"]) == {seeded["home"], seeded["allergy"],
                                          seeded["derived"], seeded["deeper"]}
    assert receipt["artifacts"][0]["id"] == seeded["artifact"]
    assert receipt["artifacts"][0]["acknowledged_at"] is not None

    dump = database_text(owner_conn)
    for text in GONE:
        assert text not in dump, f"{text!r} survived the erasure"
    # Everyone else is as they were.
    assert _recall(client, tenant["app"]) == before
    tea_after = client.get(f"/v1/memories/{seeded['tea']}", headers=tenant["app"]).json()
    assert tea_after == tea_before
    # The pending ingestion of the subject failed without its payload.
    pending = client.get(f"/v1/operations/{seeded['ingest']}", headers=tenant["app"]).json()
    assert pending["status"] == "failed"
    # The subject's source stays excluded, by digest only.
    refused = client.post("/v1/memories", json={"subject": "anyone", "text": "New words",
                                                "source": "chat:4242"}, headers=tenant["app"])
    assert refused.status_code == 409
    # The request is still found by the plain subject.
    found = client.get(f"/v1/erasure-requests?subject={SUBJECT}",
                       headers=tenant["compliance"]).json()
    assert [r["id"] for r in found["data"]] == [filed["id"]]
    # The audit chain still verifies, and the erasure's moves are in it.
    assert client.get("/v1/audit/verify", headers=tenant["compliance"]).json()["ok"] is True
    trail = client.get(f"/v1/audit?target_id={filed['id']}",
                       headers=tenant["compliance"]).json()["data"]
    assert [e["action"] for e in trail] == [
        "erasure.requested", "erasure.running", "erasure.awaiting_artifacts",
        "erasure.completed", "erasure.vacuumed"]


def test_the_redelivered_ingestion_of_erased_messages_stores_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    body = {"subject": SUBJECT, "source": "chat:4242",
            "memories": [{"text": "Porcupine quill collection"}],
            "messages": [{"role": "user", "content": "Zeppelin rides are my thing"}]}
    headers = {**tenant["app"], "Idempotency-Key": "ingest-1"}
    operation_id = client.post("/v1/ingest", json=body, headers=headers).json()["operation_id"]
    ingestion_tasks.apply_ingestion(operation_id, tenant["id"])
    filed = file(client, tenant["app"])
    assert run(filed["id"], tenant["id"]) == "completed"
    memories = owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0]
    ingestion_tasks.apply_ingestion(operation_id, tenant["id"])  # the broker redelivers
    again = client.post("/v1/ingest", json=body, headers=headers)  # the product retries
    assert again.status_code == 202
    ingestion_tasks.apply_ingestion(operation_id, tenant["id"])
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == memories
    dump = database_text(owner_conn)
    assert "Porcupine" not in dump and SUBJECT not in dump
    # A new import of the same source is refused: the exclusion outlived the name.
    fresh = client.post("/v1/ingest", json=body, headers={**tenant["app"],
                                                           "Idempotency-Key": "ingest-2"})
    ingestion_tasks.apply_ingestion(fresh.json()["operation_id"], tenant["id"])
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == memories


def test_a_held_memory_survives_and_the_release_completes_the_erasure(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    kept = remember(client, tenant["app"], SUBJECT, "Signed the Quarry Lane lease")
    other = remember(client, tenant["app"], SUBJECT, "Allergic to tamarind")
    hold = client.post("/v1/legal-holds", json={"memory_ids": [kept], "reason": "litigation",
                                                "case_ref": "C-7"}, headers=tenant["compliance"])
    assert hold.status_code == 201, hold.text
    filed = file(client, tenant["app"])
    assert run(filed["id"], tenant["id"]) == "on_hold"
    held = status(client, tenant["compliance"], filed["id"])
    assert held["status"] == "on_hold"
    assert [(h["memory_id"], h["hold_id"]) for h in held["receipt"]["held"]] == [
        (kept, hold.json()["id"])]
    assert held["receipt"]["tombstoned"] == [other]
    assert client.get(f"/v1/memories/{kept}", headers=tenant["app"]).status_code == 200
    # A second filing while it waits answers the same request.
    assert file(client, tenant["app"])["id"] == filed["id"]

    released = client.delete(f"/v1/legal-holds/{hold.json()['id']}",
                             headers=tenant["compliance"])
    assert released.status_code == 204
    assert tasks.resume(tenant["id"]) == 1  # what the release sent after its commit
    assert run(filed["id"], tenant["id"]) == "completed"
    done = status(client, tenant["compliance"], filed["id"])["receipt"]
    assert done["held"][0]["memory_id"] == kept and done["held"][0]["released_at"]
    assert done["tombstoned"] == [other, kept]  # first kept, then erased after the release
    assert client.get(f"/v1/memories/{kept}", headers=tenant["app"]).status_code == 404
    assert "Quarry" not in database_text(owner_conn)


def test_the_receipt_verifies_with_the_public_key_alone_and_fails_once_changed(
    client: Any, tenant: dict[str, Any]
) -> None:
    remember(client, tenant["app"], SUBJECT, "Allergic to tamarind")
    filed = file(client, tenant["app"])
    run(filed["id"], tenant["id"])
    served = client.get(f"/v1/erasure-requests/{filed['id']}/receipt", headers=tenant["app"])
    assert served.status_code == 200, served.text
    jwk = client.get("/v1/receipts/public-key").json()
    assert offline.verify_text(served.text, jwk).ok
    tampered = served.text.replace('"memories":1', '"memories":0')
    assert tampered != served.text
    assert not offline.verify_text(tampered, jwk).ok


def test_an_interrupted_cascade_goes_on_from_its_checkpoint_with_exact_counts(
    client: Any, tenant: dict[str, Any], owner_conn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [remember(client, tenant["app"], SUBJECT, f"Fact number {i} about the lane")
           for i in range(7)]
    derived = remember(client, tenant["app"], "team:ops", "Derived from fact one",
                       derived_from=[ids[0]])
    monkeypatch.setenv("LETHE_ERASURE_BATCH_SIZE", "3")
    from app.core.config import get_settings
    get_settings.cache_clear()
    real = cascade.erase_batch
    calls = {"n": 0}

    def dies_in_the_second_batch(*args: Any, **kwargs: Any) -> int:
        calls["n"] += 1
        done = real(*args, **kwargs)
        if calls["n"] == 2:
            raise SystemExit("killed before the commit")  # not an Exception: no retry path
        return done

    monkeypatch.setattr(cascade, "erase_batch", dies_in_the_second_batch)
    filed = file(client, tenant["app"])
    with pytest.raises(SystemExit):
        run(filed["id"], tenant["id"])
    halfway = status(client, tenant["compliance"], filed["id"])
    assert halfway["status"] == "running"
    assert halfway["progress"] == {"done": 3, "total": 8}  # the first batch committed only
    monkeypatch.setattr(cascade, "erase_batch", real)
    assert run(filed["id"], tenant["id"]) == "completed"
    get_settings.cache_clear()
    receipt = status(client, tenant["compliance"], filed["id"])["receipt"]
    assert receipt["counts"]["memories"] == 7 and receipt["counts"]["derived_memories"] == 1
    assert receipt["counts"]["versions"] == 8
    assert sorted(receipt["tombstoned"]) == sorted([*ids, derived])
    forgotten = owner_conn.execute(
        "SELECT target_id, count(*) FROM audit_event WHERE action = 'memory.transition'"
        " AND to_state = 'forgotten' GROUP BY target_id").fetchall()
    assert sorted(row[0] for row in forgotten) == sorted([*ids, derived])
    assert all(row[1] == 1 for row in forgotten), "a memory was tombstoned twice"
