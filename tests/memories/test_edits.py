from __future__ import annotations

from typing import Any

from tests.memories.helpers import count, created

PROBLEMS = "https://lethe.dev/problems/"


def _patch(client: Any, tenant: dict[str, Any], memory_id: str, body: dict[str, Any],
           etag: str | None) -> Any:
    headers = {**tenant["app"], **({"If-Match": etag} if etag is not None else {})}
    return client.patch(f"/v1/memories/{memory_id}", json=body, headers=headers)


def _revert(client: Any, tenant: dict[str, Any], memory_id: str, seq: Any, etag: str) -> Any:
    return client.post(f"/v1/memories/{memory_id}/revert", json={"seq": seq},
                       headers={**tenant["app"], "If-Match": etag})


def test_patch_without_if_match_is_428(client: Any, tenant: dict[str, Any]) -> None:
    memory = created(client, tenant["app"])
    response = _patch(client, tenant, memory["id"], {"text": "Lives in Porto."}, None)
    assert response.status_code == 428
    assert response.json()["type"] == PROBLEMS + "if-match-required"
    assert response.headers["content-type"] == "application/problem+json"


def test_patch_with_stale_if_match_is_412_with_current_revision(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    memory = created(client, tenant["app"])
    assert _patch(client, tenant, memory["id"], {"text": "B"}, '"1"').status_code == 200
    stale = _patch(client, tenant, memory["id"], {"text": "C"}, '"1"')
    assert stale.status_code == 412
    assert stale.json()["type"] == PROBLEMS + "revision-mismatch"
    assert stale.json()["current_revision"] == 2
    assert count(owner_conn, "memory_version") == 2


def test_malformed_if_match_is_400(client: Any, tenant: dict[str, Any]) -> None:
    memory = created(client, tenant["app"])
    for etag in ("1", "W/\"1\"", "*", '"one"', '"1", "2"'):
        response = _patch(client, tenant, memory["id"], {"text": "B"}, etag)
        assert response.status_code == 400, etag
        assert response.json()["type"] == PROBLEMS + "invalid-if-match"


def test_each_change_moves_the_revision_by_exactly_one(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = created(client, tenant["app"])
    mid = memory["id"]
    both = _patch(client, tenant, mid, {"text": "B", "volatility": "situational",
                                        "metadata": {"a": 1}, "depends_on": {"x": "1"}}, '"1"')
    assert both.status_code == 200, both.text
    assert both.json()["revision"] == 2 and both.headers["ETag"] == '"2"'
    assert both.json()["version"]["seq"] == 2
    assert (both.json()["volatility"], both.json()["metadata"]) == ("situational", {"a": 1})
    meta_only = _patch(client, tenant, mid, {"metadata": {"a": 2}}, '"2"')
    assert meta_only.json()["revision"] == 3 and meta_only.json()["version"]["seq"] == 2
    reverted = _revert(client, tenant, mid, 1, '"3"')
    assert reverted.status_code == 200
    assert reverted.json()["revision"] == 4 and reverted.json()["text"] == "Lives in Lisbon."
    read = client.get(f"/v1/memories/{mid}", headers=tenant["app"])
    assert read.headers["ETag"] == '"4"' and read.json()["version"]["seq"] == 1


def test_stale_write_after_update_then_revert_loses(client: Any, tenant: dict[str, Any]) -> None:
    memory = created(client, tenant["app"])
    mid = memory["id"]
    assert _patch(client, tenant, mid, {"text": "Lives in Porto."}, '"1"').status_code == 200
    assert _revert(client, tenant, mid, 1, '"2"').status_code == 200
    # The same version is current again, as at revision 1; a write based on it still loses.
    aba = _patch(client, tenant, mid, {"text": "Lives in Faro."}, '"1"')
    assert aba.status_code == 412 and aba.json()["current_revision"] == 3
    assert _revert(client, tenant, mid, 2, '"1"').status_code == 412
    versions = client.get(f"/v1/memories/{mid}/versions", headers=tenant["app"]).json()["data"]
    assert [(v["seq"], v["current"]) for v in versions] == [(1, True), (2, False)]


def test_revert_and_patch_validate_their_bodies(client: Any, tenant: dict[str, Any]) -> None:
    memory = created(client, tenant["app"])
    assert _revert(client, tenant, memory["id"], 9, '"1"').status_code == 422
    empty = _patch(client, tenant, memory["id"], {}, '"1"')
    assert empty.status_code == 200 and empty.json()["revision"] == 1
    assert _patch(client, tenant, memory["id"], {}, '"7"').status_code == 412
    assert _revert(client, tenant, memory["id"], "1", '"1"').status_code == 422
    assert _revert(client, tenant, memory["id"], True, '"1"').status_code == 422
    assert _patch(client, tenant, memory["id"], {"text": ""}, '"1"').status_code == 422
    assert _patch(client, tenant, memory["id"], {"state": "active"}, '"1"').status_code == 422
    read = client.get(f"/v1/memories/{memory['id']}", headers=tenant["app"]).json()
    assert read["revision"] == 1


def test_versions_list_oldest_first_with_current_flag(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = created(client, tenant["app"], text="v1")
    for n in (2, 3):
        response = _patch(client, tenant, memory["id"], {"text": f"v{n}"}, f'"{n - 1}"')
        assert response.status_code == 200
    data = client.get(f"/v1/memories/{memory['id']}/versions", headers=tenant["app"]).json()
    assert [(v["seq"], v["text"], v["current"]) for v in data["data"]] == [
        (1, "v1", False), (2, "v2", False), (3, "v3", True)]
    assert set(data["data"][0]) == {"id", "seq", "text", "created_at", "current"}
