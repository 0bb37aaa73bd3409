from __future__ import annotations

from typing import Any

from tests.memories.helpers import created


def test_pagination_walks_every_memory_once_in_order(
    client: Any, tenant: dict[str, Any]
) -> None:
    ids = [created(client, tenant["app"], text=f"fact {n}")["id"] for n in range(7)]
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/memories", params=params, headers=tenant["app"]).json()
        assert len(page["data"]) <= 3
        seen += [m["id"] for m in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == ids


def test_filters_narrow_the_list(client: Any, tenant: dict[str, Any]) -> None:
    a = created(client, tenant["app"], subject="user:1", key="city", source="chat:1")
    b = created(client, tenant["app"], subject="user:1", text="Likes tea.", source="chat:2")
    c = created(client, tenant["app"], subject="user:2", text="Likes coffee.",
                supersedes=[b["id"]])

    def ids(**params: Any) -> list[str]:
        response = client.get("/v1/memories", params=params, headers=tenant["app"])
        assert response.status_code == 200, response.text
        return [m["id"] for m in response.json()["data"]]

    assert ids(subject="user:1") == [a["id"], b["id"]]
    assert ids(subject="user:1", state="active") == [a["id"]]
    assert ids(state="deprecated") == [b["id"]]
    assert ids(key="city") == [a["id"]]
    assert ids(source="chat:2") == [b["id"]]
    assert ids(subject="user:2") == [c["id"]]
    assert ids(state="forgotten") == []


def test_bad_list_parameters_are_422(client: Any, tenant: dict[str, Any]) -> None:
    for params in ({"limit": 0}, {"limit": 201}, {"state": "gone"}, {"cursor": "%%%"},
                   {"cursor": "bm90LWpzb24"}):
        response = client.get("/v1/memories", params=params, headers=tenant["app"])
        assert response.status_code == 422, params


def test_other_tenant_gets_404_everywhere(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    memory = created(client, tenant["app"], key="city")
    mid = memory["id"]
    them = {**other_tenant["app"], "If-Match": '"1"'}
    assert client.get(f"/v1/memories/{mid}", headers=them).status_code == 404
    assert client.get(f"/v1/memories/{mid}/versions", headers=them).status_code == 404
    assert client.get(f"/v1/memories/{mid}/lineage", headers=them).status_code == 404
    assert client.patch(f"/v1/memories/{mid}", json={"text": "x"},
                        headers=them).status_code == 404
    assert client.post(f"/v1/memories/{mid}/revert", json={"seq": 1},
                       headers=them).status_code == 404
    assert client.get("/v1/memories", headers=them).json()["data"] == []
    # Their writes cannot reach it either: supersedes/derived_from see no such memory...
    for field in ("supersedes", "derived_from"):
        response = client.post("/v1/memories", json={"subject": "user:42", "text": "x",
                                                      field: [mid]}, headers=them)
        assert response.status_code == 422
    # ...and the same slot in their tenant is their own memory.
    theirs = client.post("/v1/memories", json={"subject": "user:42", "text": "y", "key": "city"},
                         headers=them)
    assert theirs.status_code == 201 and theirs.json()["id"] != mid
    mine = client.get(f"/v1/memories/{mid}", headers=tenant["app"]).json()
    assert mine["revision"] == 1 and mine["state"] == "active"


def test_missing_memory_and_bad_id_are_404_and_422(client: Any, tenant: dict[str, Any]) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/v1/memories/{missing}", headers=tenant["app"]).status_code == 404
    assert client.get("/v1/memories/not-a-uuid", headers=tenant["app"]).status_code == 422


def test_forgotten_memory_reads_as_absent(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = created(client, tenant["app"])
    owner_conn.execute("UPDATE memory SET state = 'forgotten' WHERE id = %s", (memory["id"],))
    assert client.get(f"/v1/memories/{memory['id']}", headers=tenant["app"]).status_code == 404
    assert client.get("/v1/memories", headers=tenant["app"]).json()["data"] == []
