"""`lethe keys rotate`: every key re-wrapped under a new KEK, the old one destroyed, every
data key still opening what it sealed; a rotation cut short is finished by the next."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from app.keys import digests, subjects, tenant_keys
from app.keys.configured import key_store
from app.keys.errors import KeyDestroyed
from app.keys.files import FileKeyStore
from app.keys.store import RotationStep

ROOT = Path(__file__).resolve().parents[2]


def _seal_some(count: int) -> tuple[uuid.UUID, dict[str, tuple[bytes, bytes]]]:
    tenant = uuid.uuid4()
    tenant_keys.create_tenant_key(tenant)
    sealed = {}
    for n in range(count):
        subject = f"user:{n}"
        aad = subjects.row_aad("memory_version", uuid.uuid4(), "text")
        sealed[subject] = (subjects.subject_key(
            tenant, digests.subject_digest(tenant, subject)).seal(subject.encode(), aad=aad),
                           aad)
    return tenant, sealed


def _all_open(tenant: uuid.UUID, sealed: dict[str, tuple[bytes, bytes]]) -> None:
    subjects.forget_cached()
    for subject, (value, aad) in sealed.items():
        key = subjects.subject_key(tenant, digests.subject_digest(tenant, subject), create=False)
        assert key.open(value, aad=aad) == subject.encode()


def _keks(folder: Path) -> set[str]:
    return {path.name for path in (folder / "kek").glob("*.kek")}


def test_rotation_rewraps_every_key_and_destroys_the_old_kek(store_folder: Path) -> None:
    tenant, sealed = _seal_some(6)
    subjects.destroy_subject_key(tenant, digests.subject_digest(tenant, "user:5"))
    del sealed["user:5"]
    digest_before = tenant_keys.tenant_key(tenant)
    (old,) = _keks(store_folder)
    old_bytes = (store_folder / "kek" / old).read_bytes()
    entries_before = {path: path.read_bytes() for path in store_folder.rglob("*.key")}

    steps: list[RotationStep] = []
    last = key_store().rotate(steps.append)

    assert _keks(store_folder) == {f"{last.kek_id}.kek"} and f"{last.kek_id}.kek" != old
    assert [step.done for step in steps] == list(range(last.total + 1))
    assert last.total == 6  # the tenant's key and five data keys
    for path, before in entries_before.items():
        assert path.read_bytes() != before and last.kek_id.encode() in path.read_bytes()
    for path in store_folder.rglob("*"):
        if path.is_file():
            assert old_bytes not in path.read_bytes(), path
    _all_open(tenant, sealed)
    tenant_keys.forget_cached()
    assert tenant_keys.tenant_key(tenant) == digest_before
    with pytest.raises(KeyDestroyed):
        subjects.subject_key(tenant, digests.subject_digest(tenant, "user:5"), create=False)
    # Another process, which never read the old KEK, opens everything too.
    fresh = FileKeyStore(store_folder)
    for subject in sealed:
        assert fresh.load(tenant, subjects.key_id_of(
            tenant, digests.subject_digest(tenant, subject))) is not None


def test_a_rotation_cut_short_stays_readable_and_the_next_one_finishes(
    store_folder: Path,
) -> None:
    tenant, sealed = _seal_some(5)

    def crash(step: RotationStep) -> None:
        if step.done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        key_store().rotate(crash)
    assert len(_keks(store_folder)) == 2  # the old one stays until every entry moved
    _all_open(tenant, sealed)
    key_store().rotate(lambda step: None)
    assert len(_keks(store_folder)) == 1
    _all_open(tenant, sealed)


def test_lethe_keys_rotate_prints_progress(store_folder: Path) -> None:
    tenant, sealed = _seal_some(3)
    done = subprocess.run([sys.executable, "-m", "app.cli", "keys", "rotate"], cwd=ROOT,
                          env=dict(os.environ), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0/4 keys re-wrapped" in done.stdout and "4/4 keys re-wrapped" in done.stdout
    assert "rotated: 4 keys" in done.stdout
    _all_open(tenant, sealed)
