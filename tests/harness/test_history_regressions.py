"""Histories the model-checked machine (`test_histories.py`) once failed, shrunk, kept as
named tests so they fail again if the bug returns."""

from __future__ import annotations

import uuid
from typing import Any

from app.keys import digests


def test_a_create_redelivered_after_its_record_expired_answers_done_though_its_source_is_excluded(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    # Shrunk history: create (keyed, with a source); DELETE (forget + exclude the source);
    # the operation record expires; the same create arrives again.
    body = {"subject": "user:ana", "text": "I own a karizux.", "source": "conversation:2"}
    keyed = {**tenant["app"], "Idempotency-Key": "h-1"}
    created = client.post("/v1/memories", json=body, headers=keyed)
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
    owner_conn.execute("DELETE FROM operation WHERE idempotency_key = 'h-1'")
    rows = owner_conn.execute("SELECT count(*) FROM memory_version").fetchone()[0]

    again = client.post("/v1/memories", json=body, headers=keyed)

    # It already happened: answered as done with the same ID, nothing stored, no resurrection.
    assert again.status_code == 201, again.text
    assert again.json() == {"id": memory_id, "state": "forgotten"}
    assert owner_conn.execute("SELECT count(*) FROM memory_version").fetchone()[0] == rows
    assert client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 404
    # A new write citing the excluded source is still refused.
    fresh = client.post("/v1/memories", json=body,
                        headers={**tenant["app"], "Idempotency-Key": "h-2"})
    assert fresh.status_code == 409 and fresh.json()["type"].endswith("/source-excluded")


def test_an_erasure_whose_held_memories_were_all_forgotten_already_completes(
    client: Any, tenant: dict[str, Any]
) -> None:
    # Shrunk history: create a memory of user:ana; DELETE it; a hold on the subject; an
    # erasure of the subject. The hold covers only a tombstone: nothing is kept, so the
    # request completes instead of waiting on_hold for a release that changes nothing.
    from app.erasure import tasks as erasure_tasks

    created = client.post("/v1/memories", json={"subject": "user:ana", "text": "I own a boat."},
                          headers=tenant["app"])
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    assert client.delete(f"/v1/memories/{memory_id}", headers=tenant["app"]).status_code == 204
    hold = client.post("/v1/legal-holds", json={"reason": "case", "subject": "user:ana"},
                       headers=tenant["compliance"])
    assert hold.status_code == 201, hold.text

    filed = client.post("/v1/erasure-requests", json={"subject": "user:ana"},
                        headers=tenant["app"])
    assert filed.status_code == 202, filed.text
    erasure_tasks.run(filed.json()["id"], tenant["id"])

    read = client.get(f"/v1/erasure-requests/{filed.json()['id']}",
                      headers=tenant["compliance"])
    assert read.json()["status"] == "completed", read.text


def test_a_slot_write_derived_from_a_memory_is_forgotten_with_it_under_cascade_forget(
    client: Any, tenant: dict[str, Any]
) -> None:
    # Shrunk history (the model's side): with cascade "forget", a memory whose later version
    # was written to its slot derived from another memory goes when that memory is forgotten:
    # the slot write's provenance is the memory's, as for a memory first written derived.
    settings = client.patch("/v1/settings", json={"forget": {"cascade": "forget"}},
                            headers=tenant["compliance"])
    assert settings.status_code == 200, settings.text
    parent = client.post("/v1/memories", json={"subject": "user:ana", "text": "I own a boat."},
                         headers=tenant["app"]).json()["id"]
    slot = {"subject": "user:ben", "key": "home"}
    first = client.post("/v1/memories", json={**slot, "text": "I live in Oslo."},
                        headers=tenant["app"])
    assert first.status_code == 201, first.text
    second = client.post("/v1/memories", json={**slot, "text": "I live in Bergen.",
                                                "derived_from": [parent]},
                         headers=tenant["app"])
    assert second.status_code == 200 and second.json()["id"] == first.json()["id"]

    assert client.delete(f"/v1/memories/{parent}", headers=tenant["app"]).status_code == 204

    assert client.get(f"/v1/memories/{first.json()['id']}",
                      headers=tenant["app"]).status_code == 404


def test_the_model_strikes_from_the_version_a_revert_made_current(
    client: Any, owner_conn: Any
) -> None:
    # Shrunk history (the model's side): a revert appends no version, so after it the
    # current text is an older version's; a forget by description then strikes from that
    # text, and the newer version (another fact) stays as it was.
    from tests.harness.machine import history_machine

    state = history_machine(client, owner_conn)()
    state.settings(cascade="flag", keep_about=False)
    state.create(derive=False, keyed=False, parent=0, sentences=3, slot=None, source=None,
                 subject="user:ana", template=0)
    state.patch(keyed=False, pick=0, stale=False, template=0, text=True)
    state.revert(pick=0, seq=0)
    state.forget_by_description(delete=True, pick=0, sentence=0)
    state.forgotten_text_is_gone()
    state.nothing_comes_back()
    state.teardown()


def test_an_erasure_clears_the_about_of_another_subjects_retraction_of_a_derived_memory(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    # Shrunk history (nightly size): with `about` phrases kept, ana's memory derived from one
    # of ben's is forgotten by description, so her retraction's `about` repeats ben's words;
    # an erasure of ben erases what was derived from his memories, and that phrase with it.
    from app.erasure import tasks as erasure_tasks

    settings = client.patch("/v1/settings", json={"retractions": {"keep_about": True}},
                            headers=tenant["compliance"])
    assert settings.status_code == 200, settings.text
    ben = client.post("/v1/memories", json={"subject": "user:ben",
                                            "text": "I play the zumbatrox."},
                      headers=tenant["app"])
    assert ben.status_code == 201, ben.text
    ana = client.post("/v1/memories", json={"subject": "user:ana",
                                            "text": "Ben plays the zumbatrox.",
                                            "derived_from": [ben.json()["id"]]},
                      headers=tenant["app"])
    assert ana.status_code == 201, ana.text
    forgot = client.post("/v1/forget", json={"subject": "user:ana",
                                              "about": "the zumbatrox", "delete": True},
                         headers=tenant["app"])
    assert forgot.status_code == 200 and forgot.json()["forgotten"] == [ana.json()["id"]], (
        forgot.text)
    garden = client.post("/v1/memories", json={"subject": "user:ana",
                                               "text": "I grow tomatoes in my garden."},
                         headers=tenant["app"])
    assert garden.status_code == 201, garden.text
    kept = client.post("/v1/forget", json={"subject": "user:ana", "about": "tomatoes",
                                           "delete": True}, headers=tenant["app"])
    assert kept.status_code == 200 and kept.json()["forgotten"] == [garden.json()["id"]], (
        kept.text)

    filed = client.post("/v1/erasure-requests", json={"subject": "user:ben"},
                        headers=tenant["app"])
    assert filed.status_code == 202, filed.text
    erasure_tasks.run(filed.json()["id"], tenant["id"])

    recall = client.post("/v1/recall", json={"subject": "user:ana", "query": "zumbatrox"},
                         headers=tenant["app"])
    assert recall.status_code == 200, recall.text
    abouts = [r.get("about") for r in recall.json()["retractions"]]
    assert "the zumbatrox" not in abouts, abouts
    # A retraction of ana's own, of nothing ben's erasure reaches, keeps its phrase.
    assert "tomatoes" in abouts, abouts
    # Phrases are stored sealed: of ana's two retractions, only the tomatoes one keeps one.
    stored = owner_conn.execute(
        "SELECT count(*) FROM retraction WHERE subject = %s AND sealed_about IS NOT NULL",
        (digests.subject_digest(uuid.UUID(tenant["id"]), "user:ana"),)).fetchone()[0]
    assert stored == 1


def test_a_cascading_forget_takes_a_deprecated_memory_derived_from_the_forgotten_one(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    # Shrunk history: with cascade "forget", a memory derived from another is superseded
    # (deprecated), then its parent is forgotten: the deprecated one still holds the text it
    # derived, and went on being served in its successor's history and by its ID.
    settings = client.patch("/v1/settings", json={"forget": {"cascade": "forget"}},
                            headers=tenant["compliance"])
    assert settings.status_code == 200, settings.text
    parent = client.post("/v1/memories", json={"subject": "user:ana",
                                               "text": "I work at kalamor Labs."},
                         headers=tenant["app"]).json()["id"]
    derived = client.post("/v1/memories", json={"subject": "user:ana",
                                                "text": "My favourite dish is kadorid.",
                                                "derived_from": [parent]},
                          headers=tenant["app"]).json()["id"]
    newer = client.post("/v1/memories", json={"subject": "user:ana", "text": "I own a zukatem.",
                                              "supersedes": [derived]}, headers=tenant["app"])
    assert newer.status_code == 201 and newer.json()["effects"]["superseded"] == [derived]

    assert client.delete(f"/v1/memories/{parent}", headers=tenant["app"]).status_code == 204

    assert client.get(f"/v1/memories/{derived}", headers=tenant["app"]).status_code == 404
    state = owner_conn.execute("SELECT state FROM memory WHERE id = %s", (derived,)).fetchone()
    assert state[0] == "forgotten"
    # Its successor stands, without the forgotten one in its history.
    recall = client.post("/v1/recall", json={"subject": "user:ana", "query": "zukatem"},
                         headers=tenant["app"]).json()["results"]
    assert [r["memory"]["id"] for r in recall] == [newer.json()["id"]]
    assert recall[0]["history"] == []
