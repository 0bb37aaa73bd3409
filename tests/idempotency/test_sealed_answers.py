"""Stored answers, job payloads and access exports are sealed under their subject's data key:
the `operation` and `access_export` rows hold no text or subject, replays answer as first
given, and once the subject's key is destroyed what it sealed answers in the erased form."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.keys import digests
from app.keys.subjects import destroy_subject_key

REPLAYED = "Idempotent-Replayed"
ANA, BEN = "user:ana-sealed", "user:ben-sealed"


def _rows(owner_conn: Any, table: str) -> str:
    return " ".join(row[0] for row in owner_conn.execute(f"SELECT t::text FROM {table} t"))


def _keyed(headers: dict[str, str], key: str) -> dict[str, str]:
    return {**headers, "Idempotency-Key": key}


def test_a_keyed_write_is_stored_sealed_and_replays_as_first_given(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    body = {"subject": ANA, "text": "Keeps a quokkapelt in the attic",
            "metadata": {"note": "zanzibarite"}}
    first = client.post("/v1/memories", json=body, headers=_keyed(tenant["app"], "w-1"))
    assert first.status_code == 201, first.text

    stored = _rows(owner_conn, "operation")
    for plain in ("quokkapelt", "zanzibarite", ANA):
        assert plain not in stored
    replay = client.post("/v1/memories", json=body, headers=_keyed(tenant["app"], "w-1"))
    assert replay.headers[REPLAYED] == "true"
    assert replay.json() == first.json()

    # The subject's key destroyed (as an erasure does): the replay shows no content.
    destroy_subject_key(
        uuid.UUID(tenant["id"]), digests.subject_digest(uuid.UUID(tenant["id"]), ANA))
    erased = client.post("/v1/memories", json=body, headers=_keyed(tenant["app"], "w-1"))
    assert erased.json() == {"id": first.json()["id"], "state": "forgotten"}


def test_a_batch_of_two_subjects_is_sealed_item_by_item(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    body = {"memories": [{"subject": ANA, "text": "Rides a velocipedine"},
                         {"subject": BEN, "text": "Collects marmalite jars"}]}
    first = client.post("/v1/memories/batch", json=body, headers=_keyed(tenant["app"], "b-1"))
    assert first.status_code == 200, first.text
    stored = _rows(owner_conn, "operation")
    for plain in ("velocipedine", "marmalite", ANA, BEN):
        assert plain not in stored

    destroy_subject_key(
        uuid.UUID(tenant["id"]), digests.subject_digest(uuid.UUID(tenant["id"]), ANA))
    replay = client.post("/v1/memories/batch", json=body, headers=_keyed(tenant["app"], "b-1"))
    assert replay.headers[REPLAYED] == "true"
    ana, ben = replay.json()["results"]
    assert ana == {"status": first.json()["results"][0]["status"],
                   "memory": {"id": first.json()["results"][0]["memory"]["id"],
                              "state": "forgotten"}}
    assert ben == first.json()["results"][1]


def test_a_keyed_correction_is_sealed_under_the_subject_its_answer_names(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    # The PATCH's body names no subject: its answer's `subject` says whose key seals it.
    made = client.post("/v1/memories", json={"subject": BEN, "text": "Owns a gyrocopter"},
                       headers=tenant["app"])
    assert made.status_code == 201, made.text
    memory_id = made.json()["id"]
    etag = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).headers["ETag"]
    headers = {**_keyed(tenant["app"], "p-1"), "If-Match": etag}
    first = client.patch(f"/v1/memories/{memory_id}", json={"text": "Owns an autogyrobus"},
                         headers=headers)
    assert first.status_code == 200, first.text
    assert "autogyrobus" not in _rows(owner_conn, "operation")
    replay = client.patch(f"/v1/memories/{memory_id}", json={"text": "Owns an autogyrobus"},
                          headers=headers)
    assert replay.headers[REPLAYED] == "true" and replay.json() == first.json()
    destroy_subject_key(
        uuid.UUID(tenant["id"]), digests.subject_digest(uuid.UUID(tenant["id"]), BEN))
    erased = client.patch(f"/v1/memories/{memory_id}", json={"text": "Owns an autogyrobus"},
                          headers=headers)
    assert erased.json() == {"id": memory_id, "state": "forgotten"}


def test_an_answer_moved_to_another_keys_record_does_not_open(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    from app.idempotency import sealing
    from app.keys.errors import Tampered

    for key, text in (("m-1", "Sails a dhow"), ("m-2", "Bakes sourdough")):
        made = client.post("/v1/memories", json={"subject": ANA, "text": text},
                           headers=_keyed(tenant["app"], key))
        assert made.status_code == 201, made.text
    moved = owner_conn.execute("SELECT response_body FROM operation "
                               "WHERE idempotency_key = 'm-1'").fetchone()[0]
    with pytest.raises(Tampered):
        sealing.open_answer(uuid.UUID(tenant["id"]), "m-2", moved)
    assert sealing.open_answer(uuid.UUID(tenant["id"]), "m-1", moved)["text"] == "Sails a dhow"


def test_an_access_export_is_sealed_and_goes_with_its_subjects_key(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    from app.access import tasks as access_tasks

    made = client.post("/v1/memories", json={"subject": ANA, "text": "Grows kohlrabioso"},
                       headers=tenant["app"])
    assert made.status_code == 201, made.text
    filed = client.post("/v1/access-requests", json={"subject": ANA}, headers=tenant["app"])
    assert filed.status_code == 202, filed.text
    request_id = filed.json()["operation_id"]
    access_tasks.export(request_id, tenant["id"])

    assert "kohlrabioso" not in _rows(owner_conn, "access_export")
    assert ANA not in _rows(owner_conn, "operation")
    export = client.get(f"/v1/access-requests/{request_id}/export", headers=tenant["app"])
    assert export.status_code == 200, export.text
    assert "kohlrabioso" in export.text

    destroy_subject_key(
        uuid.UUID(tenant["id"]), digests.subject_digest(uuid.UUID(tenant["id"]), ANA))
    gone = client.get(f"/v1/access-requests/{request_id}/export", headers=tenant["app"])
    assert gone.status_code == 404, gone.text
