"""A key store that cannot be read answers 503 problem+json with Retry-After, and the
request's writes roll back: never a 500, never something written without its key."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from app.keys import subjects
from tests.conftest import ADMIN_TOKEN


def _break(folder: Path) -> None:
    """The store's folder replaced by a file: unreadable even to root."""
    shutil.rmtree(folder)
    folder.write_bytes(b"not a key store")
    subjects.forget_cached()


def _assert_unavailable(response: Any) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.headers["Retry-After"] == "5"
    body = response.json()
    assert body["type"].endswith("/key-store-unavailable") and body["status"] == 503


def test_creating_a_tenant_without_its_key_is_a_503_and_creates_nothing(
    client: Any, store_folder: Path, owner_conn: Any
) -> None:
    client.post("/v1/tenants", json={"name": "Before"},
                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})  # the store is in use
    _break(store_folder)
    tenants = owner_conn.execute("SELECT count(*) FROM tenant").fetchone()[0]
    refused = client.post("/v1/tenants", json={"name": "Initech"},
                          headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    _assert_unavailable(refused)
    assert owner_conn.execute("SELECT count(*) FROM tenant").fetchone()[0] == tenants


def test_a_write_whose_key_cannot_be_read_is_a_503_and_writes_nothing(
    client: Any, store_folder: Path, tenant: dict[str, Any], owner_conn: Any
) -> None:
    _break(store_folder)
    refused = client.post("/v1/memories", json={"subject": "user:1", "text": "Likes tea",
                                                 "source": "chat:1"}, headers=tenant["app"])
    _assert_unavailable(refused)
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0
    filed = client.post("/v1/erasure-requests", json={"subject": "user:1"},
                        headers=tenant["app"])
    _assert_unavailable(filed)
    assert owner_conn.execute("SELECT count(*) FROM erasure_request").fetchone()[0] == 0


def test_a_removed_store_is_a_503_not_a_new_store(
    client: Any, store_folder: Path, tenant: dict[str, Any]
) -> None:
    shutil.rmtree(store_folder)
    subjects.forget_cached()
    refused = client.post("/v1/erasure-requests", json={"subject": "user:1"},
                          headers=tenant["app"])
    _assert_unavailable(refused)
    assert not store_folder.exists()


def test_the_console_answers_a_page_with_503_and_retry_after(
    client: Any, store_folder: Path, tenant: dict[str, Any], owner_conn: Any
) -> None:
    from tests.console.records_support import csrf_of, sign_in

    sign_in(client, tenant)
    token = csrf_of(client.get("/console/erasures").text)
    _break(store_folder)
    refused = client.post("/console/erasures", data={"csrf_token": token, "subject": "user:1"},
                          follow_redirects=False)
    assert refused.status_code == 503, refused.text
    assert refused.headers["content-type"].startswith("text/html")
    assert refused.headers["Retry-After"] == "5"
    assert "key store cannot be read" in refused.text and "nothing was changed" in refused.text
    assert owner_conn.execute("SELECT count(*) FROM erasure_request").fetchone()[0] == 0
