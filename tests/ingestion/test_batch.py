"""`POST /v1/memories/batch`: one embedding batch, one transaction, each item answered in its
slot; valid items stored beside refused ones; idempotent as a whole."""

from __future__ import annotations

from typing import Any

from tests import sealed
from tests.memories.helpers import created

SUBJECT = "user:batch"


def _batch(client: Any, tenant: dict[str, Any], items: list[Any], **headers: str) -> Any:
    return client.post("/v1/memories/batch", json={"memories": items},
                       headers={**tenant["app"], **headers})


def _item(text: str, **extra: Any) -> dict[str, Any]:
    return {"subject": SUBJECT, "text": text, **extra}


def test_a_batch_stores_every_item_in_order(client: Any, tenant: dict[str, Any]) -> None:
    texts = [f"The user owns {n} bicycles and rides them on weekends." for n in range(1, 31)]
    response = _batch(client, tenant, [_item(t) for t in texts])
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201] * 30
    assert [r["memory"]["text"] for r in results] == texts
    for result in results[:3]:
        shown = client.get(f"/v1/memories/{result['memory']['id']}", headers=tenant["app"])
        assert shown.json()["text"] == result["memory"]["text"]
        assert result["effects"] == {"superseded": [], "suspected": [], "retraction": None}


def test_more_than_100_items_are_refused_whole(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    response = _batch(client, tenant, [_item(f"Fact number {n}.") for n in range(101)])
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0
    assert _batch(client, tenant, []).status_code == 422


def test_valid_items_are_stored_beside_refused_ones(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    excluded = client.post("/v1/sources/exclusions", headers=tenant["app"],
                           json={"source": "ticket:9", "reason": "withdrawn"})
    assert excluded.status_code == 201, excluded.text
    slot = created(client, tenant["app"], subject=SUBJECT, text="Lives in Lisbon.",
                   key="home_city")
    items: list[Any] = [
        _item("Works as a nurse."),
        {"subject": SUBJECT},  # no text
        _item("Prefers tea.", source="ticket:9"),
        _item("Lives in Porto.", key="home_city", volatility="working", session="run:1"),
        _item("Has a cat.", supersedes=["00000000-0000-4000-8000-000000000000"]),
        "not an object",
        _item("Speaks Portuguese.", volatility="eternal"),
    ]
    response = _batch(client, tenant, items)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 422, 409, 200, 422, 422, 422]
    assert results[0]["memory"]["text"] == "Works as a nurse."
    assert results[1]["error"]["type"].endswith("/validation-error")
    assert results[1]["error"]["errors"][0]["loc"] == ["body", "memories", "1", "text"]
    assert results[2]["error"]["type"].endswith("/source-excluded")
    assert results[3]["memory"]["id"] == slot["id"]
    assert results[3]["memory"]["revision"] == slot["revision"] + 1
    assert results[3]["memory"]["session"] == "run:1"
    assert results[4]["error"]["type"].endswith("/invalid-reference")
    for refused in results[1:3] + results[4:]:
        assert set(refused) == {"status", "error"}
    texts = set(sealed.texts(owner_conn, current=True))
    assert texts == {"Works as a nurse.", "Lives in Porto."}
    # The refusal by source is audited, as a single write's is.
    refusals = owner_conn.execute(
        "SELECT details ->> 'attempted' FROM audit_event WHERE action = 'write.refused'"
    ).fetchall()
    assert refusals == [("memory.batch",)]


def test_a_keyed_batch_replays_whole_and_changes_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    items = [_item("Collects stamps."), _item("Plays the cello."), {"subject": SUBJECT}]
    first = _batch(client, tenant, items, **{"Idempotency-Key": "import-1"})
    replay = _batch(client, tenant, items, **{"Idempotency-Key": "import-1"})
    assert first.status_code == replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 2
    other = _batch(client, tenant, items[:1], **{"Idempotency-Key": "import-1"})
    assert other.status_code == 422

    # Forgetting an item redacts the stored answer's slot: no forgotten text in any table.
    forgotten = first.json()["results"][0]["memory"]["id"]
    assert client.delete(f"/v1/memories/{forgotten}", headers=tenant["app"]).status_code == 204
    after = _batch(client, tenant, items, **{"Idempotency-Key": "import-1"}).json()["results"]
    assert after[0] == {"status": 201, "memory": {"id": forgotten, "state": "forgotten"}}
    assert after[1] == first.json()["results"][1]
    stored = owner_conn.execute("SELECT response_body::text FROM operation").fetchall()
    assert not any("Collects stamps" in row[0] for row in stored)


def test_a_redelivery_after_the_record_expired_lands_on_the_same_ids(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    items = [_item("Runs marathons."), _item("Grows tomatoes.")]
    first = _batch(client, tenant, items, **{"Idempotency-Key": "import-2"}).json()["results"]
    client.delete(f"/v1/memories/{first[1]['memory']['id']}", headers=tenant["app"])
    owner_conn.execute("DELETE FROM operation")
    again = _batch(client, tenant, items, **{"Idempotency-Key": "import-2"}).json()["results"]
    assert again[0]["memory"]["id"] == first[0]["memory"]["id"]
    assert again[1] == {"status": 201,
                        "memory": {"id": first[1]["memory"]["id"], "state": "forgotten"}}
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 2


def test_forget_requests_in_a_batch_are_handled_as_forgets(
    client: Any, tenant: dict[str, Any]
) -> None:
    client.patch("/v1/settings", json={"detect_forget_requests": True},
                 headers=tenant["compliance"])
    sneakers = created(client, tenant["app"], subject=SUBJECT, text="The user collects sneakers.")
    results = _batch(client, tenant, [_item("Please forget that I collect sneakers."),
                                      _item("The user likes jazz.")]).json()["results"]
    assert results[0]["status"] == 200 and "memory" not in results[0]
    assert sneakers["id"] in results[0]["effects"]["retraction"]["forgotten"]
    assert results[1]["status"] == 201
    assert client.get(f"/v1/memories/{sneakers['id']}", headers=tenant["app"]).status_code == 404


def test_the_items_are_embedded_in_one_call(
    client: Any, tenant: dict[str, Any], monkeypatch: Any
) -> None:
    from app.embeddings.runtime import embedder

    model = embedder()
    calls: list[list[str]] = []
    real_embed, real_one = model.embed, model.embed_one

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return real_embed(texts)

    def embed_one(text: str) -> list[float]:
        calls.append([text])
        return real_one(text)

    # The real model answers; the wrappers only note how it was called.
    monkeypatch.setattr(model, "embed", embed)
    monkeypatch.setattr(model, "embed_one", embed_one)
    texts = [f"The user has visited {n} countries." for n in range(2, 7)]
    response = _batch(client, tenant, [_item(text) for text in texts])
    assert [r["status"] for r in response.json()["results"]] == [201] * 5
    assert calls == [texts]
