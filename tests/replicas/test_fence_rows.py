"""The forget fence on the primary: every way a memory leaves recall raises its tenant's fence,
once per transaction however many memories it removes; writes that remove nothing leave it."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.erasure.helpers import file, remember, run

SUBJECT = "user:fenced"


def fence(owner_conn: Any, tenant: dict[str, Any]) -> int:
    row = owner_conn.execute("SELECT generation FROM forget_fence WHERE tenant_id = %s",
                             (tenant["id"],)).fetchone()
    return int(row[0]) if row else 0


def test_each_removal_from_recall_raises_the_fence_and_nothing_else_does(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    app, compliance = tenant["app"], tenant["compliance"]
    first = remember(client, app, SUBJECT, "Grows quinces by the river")
    second = remember(client, app, SUBJECT, "Sings in a choir on Thursdays")
    assert fence(owner_conn, tenant) == 0  # a new memory hides nothing

    edited = client.patch(f"/v1/memories/{first}", json={"text": "Grows medlars by the river"},
                          headers={**app, "If-Match": '"1"'})
    assert edited.status_code == 200, edited.text
    assert fence(owner_conn, tenant) == 1  # its old text no longer recalled

    held = client.post(f"/v1/memories/{second}/quarantine", headers=compliance)
    assert held.status_code == 200, held.text
    assert fence(owner_conn, tenant) == 2
    released = client.post(f"/v1/memories/{second}/release", headers=compliance)
    assert released.status_code == 200, released.text
    assert fence(owner_conn, tenant) == 2  # back in recall: nothing to hide

    forgotten = client.post(f"/v1/memories/{first}/forget", json={}, headers=app)
    assert forgotten.status_code == 200, forgotten.text
    assert fence(owner_conn, tenant) == 3

    # A memory out of recall already is still listed, and shown as history: its forget too.
    held = client.post(f"/v1/memories/{second}/quarantine", headers=compliance)
    assert held.status_code == 200 and fence(owner_conn, tenant) == 4
    forgotten = client.post(f"/v1/memories/{second}/forget", json={}, headers=app)
    assert forgotten.status_code == 200, forgotten.text
    assert fence(owner_conn, tenant) == 5


def test_an_erasure_of_many_memories_raises_the_fence_once_per_batch(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    app = tenant["app"]
    for index in range(5):
        remember(client, app, SUBJECT, f"Fact number {index} about the fenced subject")
    filed = file(client, app, SUBJECT)
    assert run(filed["id"], tenant["id"]) == "completed"
    assert fence(owner_conn, tenant) == 1
    assert fence(owner_conn, other_tenant) == 0  # another tenant's recalls wait for nothing


def test_the_application_reads_its_fence_and_cannot_lower_it(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    from app.core.runtime import get_runtime
    from tests.conftest import _libpq

    memory = remember(client, tenant["app"], SUBJECT, "Collects brass door knockers")
    client.post(f"/v1/memories/{memory}/forget", json={}, headers=tenant["app"])
    with psycopg.connect(_libpq(get_runtime().app_url)) as conn:
        conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (other_tenant["id"],))
        assert conn.execute("SELECT count(*) FROM forget_fence").fetchone() == (0,)
        conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (tenant["id"],))
        assert conn.execute("SELECT generation FROM forget_fence").fetchone() == (1,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE forget_fence SET generation = 0")


def test_an_expiry_set_or_brought_forward_raises_the_fence_and_one_put_off_does_not(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    """A replica that has not replayed a new expiry would recall the memory once its instant
    passed: setting one, or moving it earlier, hides the memory as a forget does."""
    from datetime import UTC, datetime, timedelta

    app = tenant["app"]
    memory = remember(client, app, SUBJECT, "Holds a museum pass valid this season")
    soon = datetime.now(UTC) + timedelta(days=2)

    def patch(expires_at: datetime | None, revision: int) -> None:
        response = client.patch(
            f"/v1/memories/{memory}",
            json={"expires_at": None if expires_at is None else expires_at.isoformat()},
            headers={**app, "If-Match": f'"{revision}"'})
        assert response.status_code == 200, response.text

    patch(soon, 1)
    assert fence(owner_conn, tenant) == 1
    patch(soon + timedelta(days=1), 2)  # put off: recalled for longer, nothing hidden
    assert fence(owner_conn, tenant) == 1
    patch(soon - timedelta(days=1), 3)
    assert fence(owner_conn, tenant) == 2
    patch(None, 4)  # cleared: nothing hidden
    assert fence(owner_conn, tenant) == 2
