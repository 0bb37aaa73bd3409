from __future__ import annotations

from typing import Any


def test_defaults(client: Any, tenant: dict[str, Any]) -> None:
    body = client.get("/v1/settings", headers=tenant["app"]).json()
    assert body["half_lives"] == {"structural": 365, "preferential": 180, "procedural": 90,
                                  "situational": 7, "working_seconds": 900}
    assert body["working"] == {"max_half_lives": 4}
    assert body["detect_forget_requests"] is False
    assert body["retention"]["deprecated_days"] > 0


def test_patch_merges_nested_fields_and_allows_fractions(
    client: Any, tenant: dict[str, Any]
) -> None:
    response = client.patch(
        "/v1/settings",
        json={"half_lives": {"situational": 0.25}, "retention": {"quarantine_days": 1.5}},
        headers=tenant["compliance"],
    )
    assert response.status_code == 200
    body = client.get("/v1/settings", headers=tenant["app"]).json()
    assert body["half_lives"]["situational"] == 0.25
    assert body["half_lives"]["structural"] == 365
    assert body["retention"]["quarantine_days"] == 1.5


def test_invalid_values_are_refused(client: Any, tenant: dict[str, Any]) -> None:
    for bad in ({"half_lives": {"structural": 0}}, {"half_lives": {"structural": "7"}},
                {"detect_forget_requests": "yes"}, {"retention": {"deprecated_days": -1}}):
        assert client.patch("/v1/settings", json=bad,
                            headers=tenant["compliance"]).status_code == 422, bad


def test_thresholds_that_would_cross_are_a_conflict(client: Any, tenant: dict[str, Any]) -> None:
    response = client.patch(
        "/v1/settings", json={"supersession": {"contradiction_min_similarity": 0.99}},
        headers=tenant["compliance"],
    )
    assert response.status_code == 409
    assert response.json()["type"].endswith("/settings-conflict")
    body = client.get("/v1/settings", headers=tenant["app"]).json()
    assert body["supersession"]["contradiction_min_similarity"] == 0.6


def test_supersession_bands_default_and_must_stay_ordered(
    client: Any, tenant: dict[str, Any]
) -> None:
    body = client.get("/v1/settings", headers=tenant["app"]).json()
    assert body["supersession"] == {"change_word_min_similarity": 0.4,
                                    "contradiction_min_similarity": 0.6,
                                    "restatement_min_similarity": 0.9}
    crossing = client.patch("/v1/settings",
                            json={"supersession": {"change_word_min_similarity": 0.7}},
                            headers=tenant["compliance"])
    assert crossing.status_code == 409
    moved = client.patch("/v1/settings", json={"supersession": {
        "change_word_min_similarity": 0.5, "contradiction_min_similarity": 0.7}},
        headers=tenant["compliance"])
    assert moved.status_code == 200
    assert moved.json()["supersession"]["change_word_min_similarity"] == 0.5


def test_a_settings_change_is_audited_naming_its_actor_and_the_fields(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    [key_id] = [str(row[0]) for row in owner_conn.execute(
        "SELECT id FROM api_key WHERE tenant_id = %s AND role = 'compliance'", (tenant["id"],))]
    changed = client.patch(
        "/v1/settings", headers=tenant["compliance"],
        json={"half_lives": {"situational": 3, "structural": 365},
              "detect_forget_requests": True},
    )
    assert changed.status_code == 200
    trail = client.get(f"/v1/audit?target_id={tenant['id']}", headers=tenant["compliance"])
    [event] = trail.json()["data"]
    assert (event["actor"], event["action"], event["target_kind"]) == (
        f"key:{key_id}", "settings.updated", "settings")
    # Names only: a value left as it was (structural) is not a change.
    assert event["details"] == {"changed": ["detect_forget_requests", "half_lives.situational"]}
    refused = client.patch("/v1/settings", headers=tenant["compliance"],
                           json={"supersession": {"contradiction_min_similarity": 0.99}})
    assert refused.status_code == 409
    after = client.get(f"/v1/audit?target_id={tenant['id']}", headers=tenant["compliance"])
    assert len(after.json()["data"]) == 1, "a refused change leaves no event"
