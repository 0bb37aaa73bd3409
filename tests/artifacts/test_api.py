"""The artifact registry: what a product derived from memories, and its erasure."""

from __future__ import annotations

import uuid
from typing import Any

from tests.webhooks.helpers import remember


def _register(client: Any, tenant: dict[str, Any], derived_from: list[str],
              ref: str = "summary-row:17", **headers: str) -> Any:
    return client.post("/v1/artifacts", json={"kind": "summary", "ref": ref,
                                              "derived_from": derived_from},
                       headers={**tenant["app"], **headers})


def test_an_artifact_is_registered_with_its_provenance(
    client: Any, tenant: dict[str, Any]
) -> None:
    first = remember(client, tenant, "Runs marathons in the rain.")
    second = remember(client, tenant, "Trains on Tuesdays by the canal.")
    response = _register(client, tenant, [first, second, first])
    assert response.status_code == 201, response.text
    artifact = response.json()
    assert artifact["kind"] == "summary" and artifact["ref"] == "summary-row:17"
    assert artifact["derived_from"] == [first, second]
    assert artifact["status"] == "active"
    assert artifact["erase_requested_at"] is None and artifact["acknowledged_at"] is None
    read = client.get(f"/v1/artifacts/{artifact['id']}", headers=tenant["app"])
    assert read.status_code == 200 and read.json() == artifact
    lineage = client.get(f"/v1/memories/{first}/lineage", headers=tenant["app"]).json()
    assert {"kind": "artifact", "ref": artifact["id"]} in [
        {"kind": c["kind"], "ref": c["ref"]} for c in lineage["children"]]


def test_derived_from_must_name_unforgotten_memories_of_the_tenant(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    mine = remember(client, tenant, "Collects vintage typewriters.")
    theirs = remember(client, other_tenant, "Grows chillies on the balcony.")
    gone = remember(client, tenant, "Owns a red bicycle.")
    assert client.delete(f"/v1/memories/{gone}", headers=tenant["app"]).status_code == 204
    for derived_from in ([theirs], [str(uuid.uuid4())], [mine, gone], []):
        response = _register(client, tenant, derived_from)
        assert response.status_code == 422, (derived_from, response.text)
    too_many = _register(client, tenant, [str(uuid.uuid4()) for _ in range(1001)])
    assert too_many.status_code == 422
    assert client.get("/v1/artifacts", headers=tenant["app"]).json()["data"] == []


def test_artifacts_are_listed_by_the_memory_they_derive_from_page_by_page(
    client: Any, tenant: dict[str, Any]
) -> None:
    source = remember(client, tenant, "Speaks Welsh at home.")
    unrelated = remember(client, tenant, "Has two cats.")
    made = [_register(client, tenant, [source], ref=f"row:{i}").json()["id"] for i in range(3)]
    _register(client, tenant, [unrelated])
    seen: list[str] = []
    cursor = None
    while True:
        query = f"/v1/artifacts?derived_from={source}&limit=2" + (
            f"&cursor={cursor}" if cursor else "")
        page = client.get(query, headers=tenant["app"]).json()
        seen += [artifact["id"] for artifact in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == made
    everything = client.get("/v1/artifacts", headers=tenant["app"]).json()["data"]
    assert len(everything) == 4


def test_a_keyed_registration_replays_and_lands_on_one_id(
    client: Any, tenant: dict[str, Any]
) -> None:
    source = remember(client, tenant, "Plays chess by post.")
    first = _register(client, tenant, [source], **{"Idempotency-Key": "art-1"})
    again = _register(client, tenant, [source], **{"Idempotency-Key": "art-1"})
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert len(client.get("/v1/artifacts", headers=tenant["app"]).json()["data"]) == 1


def test_withdrawing_an_artifact_unregisters_it(client: Any, tenant: dict[str, Any]) -> None:
    source = remember(client, tenant, "Bakes sourdough on Sundays.")
    artifact = _register(client, tenant, [source]).json()["id"]
    assert client.delete(f"/v1/artifacts/{artifact}", headers=tenant["app"]).status_code == 204
    assert client.get(f"/v1/artifacts/{artifact}", headers=tenant["app"]).status_code == 404
    assert client.delete(f"/v1/artifacts/{artifact}", headers=tenant["app"]).status_code == 404
    lineage = client.get(f"/v1/memories/{source}/lineage", headers=tenant["app"]).json()
    assert lineage["children"] == []
    events = client.get(f"/v1/audit?target_id={artifact}",
                        headers=tenant["compliance"]).json()["data"]
    assert [e["action"] for e in events] == ["artifact.registered", "artifact.withdrawn"]


def test_an_artifact_nobody_asked_to_erase_cannot_be_acknowledged(
    client: Any, tenant: dict[str, Any]
) -> None:
    source = remember(client, tenant, "Sings in a choir.")
    artifact = _register(client, tenant, [source]).json()["id"]
    response = client.post(f"/v1/artifacts/{artifact}/erased", headers=tenant["app"])
    assert response.status_code == 409
    assert response.json()["type"] == "https://lethe.dev/problems/no-erase-requested"


def test_another_tenant_gets_404_on_every_artifact_id(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    source = remember(client, tenant, "Paints watercolours of lighthouses.")
    artifact = _register(client, tenant, [source]).json()["id"]
    other = other_tenant["app"]
    assert client.get(f"/v1/artifacts/{artifact}", headers=other).status_code == 404
    assert client.delete(f"/v1/artifacts/{artifact}", headers=other).status_code == 404
    assert client.post(f"/v1/artifacts/{artifact}/erased", headers=other).status_code == 404
    assert client.get(f"/v1/artifacts?derived_from={source}",
                      headers=other).json()["data"] == []
    assert client.get(f"/v1/artifacts/{artifact}", headers=tenant["app"]).status_code == 200
