from __future__ import annotations

import uuid
from typing import Any

from app.keys import digests, subjects
from tests.memories.helpers import count, created, remember

MEMORY_FIELDS = {
    "id", "subject", "text", "revision", "version", "state", "volatility", "key", "source",
    "depends_on", "metadata", "superseded_by", "flags", "created_at", "updated_at",
    "last_validated_at", "observed_at", "session", "expires_at",
}


def test_create_then_read_with_etag(client: Any, tenant: dict[str, Any]) -> None:
    response = remember(client, tenant["app"], text="Prefers tea.", key="drink",
                        source="conversation:81", depends_on={"product.version": "4.1"},
                        metadata={"lang": "en"}, volatility="structural")
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == MEMORY_FIELDS | {"effects"}
    assert body["effects"] == {"superseded": [], "suspected": [], "retraction": None}
    assert body["revision"] == 1 and body["version"]["seq"] == 1
    assert body["state"] == "active" and body["volatility"] == "structural"
    assert response.headers["ETag"] == '"1"'
    read = client.get(f"/v1/memories/{body['id']}", headers=tenant["app"])
    assert read.status_code == 200
    assert read.headers["ETag"] == '"1"'
    assert set(read.json()) == MEMORY_FIELDS
    assert read.json()["text"] == "Prefers tea."
    assert read.json()["metadata"] == {"lang": "en"}
    assert read.json()["depends_on"] == {"product.version": "4.1"}


def test_version_rows_carry_embedding_and_hashed_search_terms(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    """The search column holds the text's lexemes as keyed hashes under the subject's key,
    with their positions; the text itself is sealed."""
    memory = created(client, tenant["app"], text="Collects vintage sneakers.")
    dims, search, sealed = owner_conn.execute(
        "SELECT vector_dims(embedding), search::text, sealed_text FROM memory_version"
        " WHERE memory_id = %s", (memory["id"],),
    ).fetchone()
    assert dims == 384
    key = subjects.subject_key(
        uuid.UUID(tenant["id"]),
            digests.subject_digest(uuid.UUID(tenant["id"]), memory["subject"]), create=False)
    assert search == " ".join(sorted(f"'{key.term(lexeme)}':{position}" for lexeme, position
                                     in (("collect", 1), ("vintag", 2), ("sneaker", 3))))
    assert b"sneaker" not in bytes(sealed) and "sneaker" not in search


def test_same_slot_adds_a_version_to_the_live_memory(client: Any, tenant: dict[str, Any]) -> None:
    first = created(client, tenant["app"], key="home_city", text="Lives in Lisbon.")
    again = remember(client, tenant["app"], key="home_city", text="Lives in Porto.")
    assert again.status_code == 200, again.text
    assert again.json()["id"] == first["id"]
    assert again.json()["revision"] == 2
    assert again.json()["version"]["seq"] == 2
    versions = client.get(f"/v1/memories/{first['id']}/versions", headers=tenant["app"]).json()
    assert [(v["seq"], v["text"], v["current"]) for v in versions["data"]] == [
        (1, "Lives in Lisbon.", False), (2, "Lives in Porto.", True)]
    # Another subject's slot of the same name is another memory.
    other = remember(client, tenant["app"], subject="user:7", key="home_city")
    assert other.status_code == 201


def test_slot_write_with_stale_expected_revision_is_refused(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    first = created(client, tenant["app"], key="home_city")
    stale = remember(client, tenant["app"], key="home_city", text="Lives in Porto.",
                     expected_revision=2)
    assert stale.status_code == 412
    assert stale.json()["type"] == "https://lethe.dev/problems/revision-mismatch"
    assert stale.json()["current_revision"] == 1
    assert count(owner_conn, "memory_version") == 1
    ok = remember(client, tenant["app"], key="home_city", text="Lives in Porto.",
                  expected_revision=1)
    assert ok.status_code == 200 and ok.json()["id"] == first["id"]


def test_supersedes_deprecates_the_defeated_memories(
    client: Any, tenant: dict[str, Any]
) -> None:
    old_a = created(client, tenant["app"], text="Likes jazz.")
    old_b = created(client, tenant["app"], text="Likes blues.")
    new = remember(client, tenant["app"], text="Dislikes music.",
                   supersedes=[old_a["id"], old_b["id"]])
    assert new.status_code == 201, new.text
    assert sorted(new.json()["effects"]["superseded"]) == sorted([old_a["id"], old_b["id"]])
    for old in (old_a, old_b):
        read = client.get(f"/v1/memories/{old['id']}", headers=tenant["app"]).json()
        assert read["state"] == "deprecated"
        assert read["superseded_by"] == new.json()["id"]
        assert read["revision"] == 2
    lineage = client.get(f"/v1/memories/{new.json()['id']}/lineage", headers=tenant["app"])
    assert sorted(lineage.json()["supersedes"]) == sorted([old_a["id"], old_b["id"]])
    # A deprecated memory cannot be superseded again.
    again = remember(client, tenant["app"], text="x", supersedes=[old_a["id"]])
    assert again.status_code == 422


def test_superseding_the_slot_holder_gives_the_slot_to_a_new_memory(
    client: Any, tenant: dict[str, Any]
) -> None:
    old = created(client, tenant["app"], key="home_city")
    new = remember(client, tenant["app"], key="home_city", text="Lives in Porto.",
                   supersedes=[old["id"]])
    assert new.status_code == 201, new.text
    assert new.json()["id"] != old["id"]
    listed = client.get("/v1/memories?key=home_city&state=active", headers=tenant["app"])
    assert [m["id"] for m in listed.json()["data"]] == [new.json()["id"]]


def test_provenance_edges_for_source_and_derived_from(
    client: Any, tenant: dict[str, Any]
) -> None:
    parent = created(client, tenant["app"], text="Has a dog.")
    child = created(client, tenant["app"], text="Owns a pet.", source="ticket:9",
                    derived_from=[parent["id"]])
    lineage = client.get(f"/v1/memories/{child['id']}/lineage", headers=tenant["app"]).json()
    assert sorted((p["kind"], p["ref"]) for p in lineage["parents"]) == [
        ("memory", parent["id"]), ("source", "ticket:9")]
    up = client.get(f"/v1/memories/{parent['id']}/lineage", headers=tenant["app"]).json()
    assert [(c["kind"], c["ref"]) for c in up["children"]] == [("memory", child["id"])]
    assert [v["seq"] for v in up["versions"]] == [1]
