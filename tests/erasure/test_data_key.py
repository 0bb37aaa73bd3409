"""An erasure destroys the subject's data key once its cascade is done, never while a hold
keeps one of its memories; the signed receipt names the key and when it was destroyed."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from app.erasure import tasks
from app.keys import digests, subjects
from app.keys.errors import KeyDestroyed
from app.receipts import offline
from tests.conftest import make_tenant
from tests.erasure.helpers import SUBJECT, file, remember, run, status
from tests.keys.helpers import own_key_store

AAD = subjects.row_aad("memory_version", uuid.UUID(int=1), "text")


def _sealed(tenant: dict[str, Any], subject: str, text: str) -> bytes:
    key = subjects.subject_key(
        uuid.UUID(tenant["id"]),
            digests.subject_digest(uuid.UUID(tenant["id"]), subject))
    return subjects.seal_text(key, text, aad=AAD)


def test_a_completed_erasure_destroys_the_data_key_and_its_receipt_says_so(
    client: Any, tenant: dict[str, Any]
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    remember(client, tenant["app"], SUBJECT, "Allergic to tamarind")
    sealed = _sealed(tenant, SUBJECT, "Allergic to tamarind")
    kept = _sealed(tenant, "user:7", "Prefers green tea")
    filed = file(client, tenant["app"])
    assert run(filed["id"], tenant["id"]) == "completed"

    data_key = status(client, tenant["compliance"], filed["id"])["receipt"]["data_key"]
    assert data_key["key_id"] == subjects.key_id_of(
        tenant_id, digests.subject_digest(tenant_id, SUBJECT))
    assert data_key["key_destroyed_at"] is not None
    with pytest.raises(KeyDestroyed):
        subjects.subject_key(tenant_id, digests.subject_digest(tenant_id, SUBJECT), create=False)
    assert sealed  # sealed under a key no store holds any more
    other = subjects.subject_key(
        tenant_id, digests.subject_digest(tenant_id, "user:7"), create=False)
    assert subjects.open_text(other, kept, aad=AAD) == "Prefers green tea"

    # The signature covers the data key: a receipt that claims another key fails.
    served = client.get(f"/v1/erasure-requests/{filed['id']}/receipt", headers=tenant["app"])
    jwk = client.get("/v1/receipts/public-key").json()
    assert offline.verify_text(served.text, jwk).ok
    body = json.loads(served.text)
    body["data_key"]["key_destroyed_at"] = "2020-01-01T00:00:00+00:00"
    assert not offline.verify_text(json.dumps(body), jwk).ok
    # A redelivered cascade changes nothing, the destruction time included.
    assert run(filed["id"], tenant["id"]) == "skipped"
    again = status(client, tenant["compliance"], filed["id"])["receipt"]["data_key"]
    assert again == data_key


def test_a_hold_keeps_the_key_until_the_resumed_erasure_completes(
    client: Any, tenant: dict[str, Any]
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    kept = remember(client, tenant["app"], SUBJECT, "Signed the Quarry Lane lease")
    remember(client, tenant["app"], SUBJECT, "Allergic to tamarind")
    sealed = _sealed(tenant, SUBJECT, "Signed the Quarry Lane lease")
    hold = client.post("/v1/legal-holds", json={"memory_ids": [kept], "reason": "litigation"},
                       headers=tenant["compliance"])
    assert hold.status_code == 201, hold.text
    filed = file(client, tenant["app"])
    assert run(filed["id"], tenant["id"]) == "on_hold"

    waiting = status(client, tenant["compliance"], filed["id"])["receipt"]["data_key"]
    assert waiting == {"key_id": None, "key_destroyed_at": None}
    key = subjects.subject_key(
        tenant_id, digests.subject_digest(tenant_id, SUBJECT), create=False)  # still there
    assert subjects.open_text(key, sealed, aad=AAD) == "Signed the Quarry Lane lease"

    released = client.delete(f"/v1/legal-holds/{hold.json()['id']}",
                             headers=tenant["compliance"])
    assert released.status_code == 204
    assert tasks.resume(tenant["id"]) == 1
    assert run(filed["id"], tenant["id"]) == "completed"
    done = status(client, tenant["compliance"], filed["id"])["receipt"]["data_key"]
    assert done["key_id"] == key.key_id and done["key_destroyed_at"] is not None
    with pytest.raises(KeyDestroyed):
        subjects.subject_key(tenant_id, digests.subject_digest(tenant_id, SUBJECT), create=False)


def test_a_memory_written_and_held_after_the_plan_keeps_the_key(
    client: Any, tenant: dict[str, Any]
) -> None:
    """Artifacts were still acknowledging when a new memory of the subject was written and
    held: completing must not destroy what the hold keeps readable."""
    tenant_id = uuid.UUID(tenant["id"])
    source = remember(client, tenant["app"], SUBJECT, "Allergic to tamarind")
    artifact = client.post("/v1/artifacts", json={"kind": "summary", "ref": "row:1",
                                                  "derived_from": [source]},
                           headers=tenant["app"])
    assert artifact.status_code == 201, artifact.text
    filed = file(client, tenant["app"])
    assert run(filed["id"], tenant["id"]) == "awaiting_artifacts"
    late = remember(client, tenant["app"], SUBJECT, "Signed the Quarry Lane lease")
    sealed = _sealed(tenant, SUBJECT, "Signed the Quarry Lane lease")
    hold = client.post("/v1/legal-holds", json={"memory_ids": [late], "reason": "litigation"},
                       headers=tenant["compliance"])
    assert hold.status_code == 201, hold.text
    acknowledged = client.post(f"/v1/artifacts/{artifact.json()['id']}/erased",
                               headers=tenant["app"])
    assert acknowledged.status_code == 200, acknowledged.text
    assert tasks.settle(filed["id"], tenant["id"]) == "completed"

    data_key = status(client, tenant["compliance"], filed["id"])["receipt"]["data_key"]
    assert data_key == {"key_id": subjects.key_id_of(
        tenant_id, digests.subject_digest(tenant_id, SUBJECT)),
                        "key_destroyed_at": None}
    key = subjects.subject_key(tenant_id, digests.subject_digest(tenant_id, SUBJECT), create=False)
    assert subjects.open_text(key, sealed, aad=AAD) == "Signed the Quarry Lane lease"


def test_an_erasure_never_completes_without_destroying_the_key(
    client: Any, tmp_path: Path, owner_conn: Any
) -> None:
    """The key store is away when the cascade ends: the task is retried (the request stays
    `running`, its subject still named), and completes, key destroyed, once the store is back."""
    with own_key_store(tmp_path / "keys") as folder:
        tenant = make_tenant(client, "Away")
        remember(client, tenant["app"], SUBJECT, "Allergic to tamarind")
        filed = file(client, tenant["app"])
        stored = digests.subject_digest(uuid.UUID(tenant["id"]), SUBJECT)
        folder.rename(tmp_path / "away")
        folder.write_bytes(b"not a key store")
        with pytest.raises(tasks.TransientError):  # called in process, retry raises it
            run(filed["id"], tenant["id"])
        waiting = owner_conn.execute("SELECT status, subject, key_destroyed_at FROM "
                                     "erasure_request").fetchone()
        assert waiting == ("running", stored, None)  # as memories store it
        folder.unlink()
        (tmp_path / "away").rename(folder)
        assert run(filed["id"], tenant["id"]) == "completed"
        data_key = status(client, tenant["compliance"], filed["id"])["receipt"]["data_key"]
        assert data_key["key_destroyed_at"] is not None
        with pytest.raises(KeyDestroyed):
            subjects.subject_key(
                uuid.UUID(tenant["id"]),
            digests.subject_digest(uuid.UUID(tenant["id"]), SUBJECT), create=False)


def test_after_an_erasure_a_memory_read_by_id_shows_its_subject_and_source_as_erased(
    client: Any, tenant: dict[str, Any], owner_conn: Any,
) -> None:
    """Before: the memory shows the subject and source it was written with (from their sealed
    copies). After the erasure, its digests name no key that still exists and its copies are
    empty: the tombstone shows the erasure's stand-ins, never the strings."""
    written = client.post("/v1/memories", headers=tenant["app"], json={
        "subject": SUBJECT, "text": "Allergic to tamarind", "source": "crm:ticket-9"})
    assert written.status_code == 201, written.text
    memory_id = written.json()["id"]
    before = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"]).json()
    assert (before["subject"], before["source"]) == (SUBJECT, "crm:ticket-9")
    filed = file(client, tenant["app"])
    assert status(client, tenant["compliance"], filed["id"])["subject"] == SUBJECT
    assert run(filed["id"], tenant["id"]) == "completed"
    after = client.get(f"/v1/memories/{memory_id}", headers=tenant["app"])
    if after.status_code == 200:  # a tombstone shown
        assert after.json()["subject"].startswith("erased:"), after.json()
        assert (after.json()["source"] or "erased:").startswith("erased:"), after.json()
    else:
        assert after.status_code in (404, 410), after.text
    stored = owner_conn.execute(
        "SELECT subject, source, sealed_subject, sealed_source FROM memory WHERE id = %s",
        (memory_id,)).fetchone()
    assert stored[0].startswith("erased:") and stored[1].startswith("erased:")
    assert (bytes(stored[2]), stored[3]) == (b"", None)
    assert status(client, tenant["compliance"], filed["id"])["subject"] is None
