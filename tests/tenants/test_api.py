from __future__ import annotations

from typing import Any

PROBLEM = "application/problem+json"


def test_admin_creates_tenant_with_two_keys(client: Any, admin_headers: dict[str, str]) -> None:
    response = client.post("/v1/tenants", json={"name": "Acme"}, headers=admin_headers)
    assert response.status_code == 201
    body = response.json()
    assert body["name"] == "Acme"
    assert body["api_keys"]["app"] != body["api_keys"]["compliance"]
    assert body["api_keys"]["app"].startswith("lethe_")
    assert "_app_" in body["api_keys"]["app"] and "_compliance_" in body["api_keys"]["compliance"]


def test_tenant_creation_needs_admin_token(client: Any, tenant: dict[str, Any]) -> None:
    missing = client.post("/v1/tenants", json={"name": "x"})
    assert missing.status_code == 401
    assert missing.headers["content-type"].startswith(PROBLEM)
    with_app_key = client.post("/v1/tenants", json={"name": "x"}, headers=tenant["app"])
    assert with_app_key.status_code == 403  # a known key of the wrong role


def test_keys_are_stored_hashed(client: Any, tenant: dict[str, Any], owner_conn: Any) -> None:
    rows = owner_conn.execute("SELECT key_hash, prefix FROM api_key").fetchall()
    stored = " ".join(f"{h} {p}" for h, p in rows)
    for raw in tenant["keys"].values():
        assert raw not in stored


def test_unknown_key_is_401_and_wrong_role_is_403(client: Any, tenant: dict[str, Any]) -> None:
    unknown = client.get("/v1/settings", headers={"Authorization": "Bearer lethe_app_nope"})
    assert unknown.status_code == 401
    assert unknown.json()["type"] == "https://lethe.dev/problems/unauthorized"
    assert client.get("/v1/settings").status_code == 401
    assert client.get("/v1/settings", headers=tenant["app"]).status_code == 200
    patch = client.patch("/v1/settings", json={"detect_forget_requests": True},
                         headers=tenant["app"])
    assert patch.status_code == 403
    assert patch.json()["type"] == "https://lethe.dev/problems/forbidden"
