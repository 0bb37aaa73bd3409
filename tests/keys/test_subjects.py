"""Data keys per (tenant, subject): sealing, tenant and row separation, destruction."""

from __future__ import annotations

import stat
import threading
import uuid
from pathlib import Path

import pytest

from app.keys import digests, tenant_keys
from app.keys import subjects as by_digest
from app.keys.configured import key_store
from app.keys.errors import KeyDestroyed, KeyStoreUnavailable, Tampered
from app.keys.files import FileKeyStore
from app.keys.subjects import open_text, row_aad, seal_text

ROW = uuid.uuid4()


class subjects:
    """`app.keys.subjects`, whose functions take the subject's stored digest, called with
    the subject as a request names it."""

    SubjectKey = by_digest.SubjectKey
    KeyDestroyed = by_digest.KeyDestroyed

    @staticmethod
    def subject_key(tenant: uuid.UUID, subject: str, **kwargs: bool) -> by_digest.SubjectKey:
        return by_digest.subject_key(tenant, digests.subject_digest(tenant, subject), **kwargs)

    @staticmethod
    def key_id_of(tenant: uuid.UUID, subject: str, generation: int = 0) -> str:
        return by_digest.key_id_of(tenant, digests.subject_digest(tenant, subject), generation)

    @staticmethod
    def current_key_id(tenant: uuid.UUID, subject: str) -> str:
        return by_digest.current_key_id(tenant, digests.subject_digest(tenant, subject))

    @staticmethod
    def destroy_subject_key(tenant: uuid.UUID, subject: str) -> tuple[str, object]:
        return by_digest.destroy_subject_key(tenant, digests.subject_digest(tenant, subject))


subject_key = subjects.subject_key


def new_tenant() -> uuid.UUID:
    """A tenant's ID with its key in the store, as creating the tenant leaves it."""
    tenant_id = uuid.uuid4()
    tenant_keys.create_tenant_key(tenant_id)
    return tenant_id
AAD = row_aad("memory_version", ROW, "text")


def test_sealed_text_opens_under_its_row_and_is_not_plaintext(store_folder: Path) -> None:
    key = subject_key(new_tenant(), "alice@example.com")
    sealed = seal_text(key, "prefers tea", aad=AAD)
    assert b"prefers tea" not in sealed
    assert open_text(key, sealed, aad=AAD) == "prefers tea"
    assert seal_text(key, "prefers tea", aad=AAD) != sealed  # a fresh nonce each time


def test_altered_ciphertext_is_refused(store_folder: Path) -> None:
    key = subject_key(new_tenant(), "alice")
    sealed = bytearray(key.seal(b"prefers tea", aad=AAD))
    sealed[20] ^= 1
    with pytest.raises(Tampered):
        key.open(bytes(sealed), aad=AAD)
    with pytest.raises(Tampered):
        key.open(b"short", aad=AAD)


def test_ciphertext_moved_to_another_row_or_column_is_refused(store_folder: Path) -> None:
    key = subject_key(new_tenant(), "alice")
    sealed = key.seal(b"prefers tea", aad=AAD)
    with pytest.raises(Tampered):
        key.open(sealed, aad=row_aad("memory_version", uuid.uuid4(), "text"))
    with pytest.raises(Tampered):
        key.open(sealed, aad=row_aad("memory_version", ROW, "metadata"))
    with pytest.raises(Tampered):
        key.open(sealed, aad=row_aad("memory", ROW, "text"))


def test_one_tenants_key_never_opens_another_tenants_rows(store_folder: Path) -> None:
    acme, globex = new_tenant(), new_tenant()
    ours, theirs = subject_key(acme, "alice"), subject_key(globex, "alice")
    assert ours.key_id != theirs.key_id
    sealed = ours.seal(b"prefers tea", aad=AAD)
    with pytest.raises(Tampered):
        theirs.open(sealed, aad=AAD)
    assert ours.term("tea") != theirs.term("tea")
    # Nor another subject's key within one tenant.
    with pytest.raises(Tampered):
        subject_key(acme, "bob").open(sealed, aad=AAD)


def test_the_key_is_stable_and_its_id_reveals_nothing_of_the_subject(
    store_folder: Path,
) -> None:
    tenant = new_tenant()
    key = subject_key(tenant, "alice@example.com")
    sealed = key.seal(b"x", aad=AAD)
    by_digest.forget_cached()
    again = subject_key(tenant, "alice@example.com", create=False)
    assert again.key_id == key.key_id and again.open(sealed, aad=AAD) == b"x"
    assert len(key.key_id) == 32 and "alice" not in key.key_id
    names = " ".join(str(path) for path in store_folder.rglob("*"))
    assert "alice" not in names and "example" not in names


def test_term_hashes_are_keyed_and_deterministic(store_folder: Path) -> None:
    tenant = new_tenant()
    key = subject_key(tenant, "alice")
    assert key.term("tea") == key.term("tea")
    assert len(key.term("tea")) == 32 and int(key.term("tea"), 16) >= 0
    assert key.term("tea") != key.term("coffee")
    assert key.term("tea") != subject_key(tenant, "bob").term("tea")


def test_absent_key_without_create_is_a_lookup_error(store_folder: Path) -> None:
    with pytest.raises(LookupError):
        subject_key(new_tenant(), "nobody", create=False)


def test_concurrent_first_uses_agree_on_one_key(store_folder: Path) -> None:
    tenant = new_tenant()
    subject_key(tenant, "warm-up")  # the tenant key exists; the race is the data key's
    found: list[subjects.SubjectKey] = []

    def first_use() -> None:
        found.append(key_in_another_process(store_folder, tenant, "alice"))

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sealed = found[0].seal(b"x", aad=AAD)
    assert all(key.open(sealed, aad=AAD) == b"x" for key in found)


def key_in_another_process(folder: Path, tenant: uuid.UUID, subject: str) -> subjects.SubjectKey:
    """The key as another process would get it: its own store object, no shared cache."""
    store = FileKeyStore(folder)
    key_id = subjects.key_id_of(tenant, subject)
    raw = store.load(tenant, key_id) or store.create(tenant, key_id, uuid.uuid4().bytes * 2)
    return subjects.SubjectKey(key_id, raw)


def test_destroyed_key_opens_nothing_and_cannot_come_back(store_folder: Path) -> None:
    tenant = new_tenant()
    key = subject_key(tenant, "alice")
    sealed = key.seal(b"prefers tea", aad=AAD)
    key_id, destroyed_at = subjects.destroy_subject_key(tenant, "alice")
    assert key_id == key.key_id
    assert subjects.destroy_subject_key(tenant, "alice") == (key_id, destroyed_at)
    with pytest.raises(KeyDestroyed):
        subject_key(tenant, "alice", create=False)
    # A write after the erasure gets a key of its own: it cannot open the erased value.
    with pytest.raises(KeyDestroyed):
        subject_key(tenant, "alice").open(sealed, aad=AAD)
    # Another subject of the tenant is untouched.
    other = subject_key(tenant, "bob")
    assert other.open(other.seal(b"y", aad=AAD), aad=AAD) == b"y"
    assert sealed  # nothing left can open it: see the byte search below


def test_files_after_destruction_hold_no_key_bytes(store_folder: Path) -> None:
    tenant = new_tenant()
    key = subject_key(tenant, "alice")
    raw = key._key
    entry = next(store_folder.rglob(f"{key.key_id}.key"))
    wrapped_entry = entry.read_bytes()
    subjects.destroy_subject_key(tenant, "alice")
    assert not entry.exists()
    for path in store_folder.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert raw not in content and raw.hex().encode() not in content, path
            assert wrapped_entry not in content, path


def test_destruction_in_another_process_stops_this_ones_cached_key(
    store_folder: Path,
) -> None:
    tenant = new_tenant()
    subject_key(tenant, "alice")  # cached here
    FileKeyStore(store_folder).destroy(tenant, subjects.key_id_of(tenant, "alice"))
    with pytest.raises(KeyDestroyed):
        subject_key(tenant, "alice", create=False)


def test_store_files_are_private(store_folder: Path) -> None:
    subject_key(new_tenant(), "alice")
    for path in [store_folder, *store_folder.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, (path, oct(mode))
    assert "kek" in key_store().check()


def test_a_store_path_that_is_a_file_is_unavailable(store_folder: Path) -> None:
    store_folder.write_bytes(b"not a folder")
    with pytest.raises(KeyStoreUnavailable):
        tenant_keys.create_tenant_key(uuid.uuid4())


def test_a_tenant_whose_key_the_store_lacks_gets_no_new_one(store_folder: Path) -> None:
    """The wrong store, or one that lost the entry: new keys would open nothing written."""
    with pytest.raises(KeyStoreUnavailable):
        subject_key(uuid.uuid4(), "alice")
    assert not list(store_folder.rglob("*.key"))


def test_a_store_removed_under_a_running_process_is_not_started_again(
    store_folder: Path,
) -> None:
    import shutil

    tenant = new_tenant()
    subject_key(tenant, "alice")
    shutil.rmtree(store_folder)
    by_digest.forget_cached()
    with pytest.raises(KeyStoreUnavailable):
        subject_key(tenant, "alice")
    with pytest.raises(KeyStoreUnavailable):
        tenant_keys.create_tenant_key(uuid.uuid4())
    assert not store_folder.exists()


def test_entries_without_their_kek_are_refused_not_rewrapped(store_folder: Path) -> None:
    tenant = new_tenant()
    subject_key(tenant, "alice")
    for kek in (store_folder / "kek").iterdir():
        kek.unlink()
    fresh = FileKeyStore(store_folder)  # a new process: it never saw the store
    with pytest.raises(KeyStoreUnavailable):
        fresh.current_kek_id()
    with pytest.raises(KeyStoreUnavailable):
        fresh.load(tenant, subjects.key_id_of(tenant, "alice"))


def test_a_subject_written_again_after_its_key_was_destroyed_gets_the_next_generation(
    store_folder: Path,
) -> None:
    tenant = new_tenant()
    first = subjects.subject_key(tenant, "alice")
    old = first.seal(b"before the erasure", aad=b"row")
    destroyed_id, _ = subjects.destroy_subject_key(tenant, "alice")
    assert destroyed_id == first.key_id
    # A read names the destruction; a write makes the next key, under another ID.
    with pytest.raises(subjects.KeyDestroyed):
        subjects.subject_key(tenant, "alice", create=False)
    second = subjects.subject_key(tenant, "alice")
    assert (second.generation, second.key_id != first.key_id) == (1, True)
    assert second.open(second.seal(b"after", aad=b"row"), aad=b"row") == b"after"
    # What the destroyed key sealed stays unreadable: erased, not mistaken for tampering.
    with pytest.raises(subjects.KeyDestroyed):
        second.open(old, aad=b"row")
    assert subjects.current_key_id(tenant, "alice") == second.key_id
    # Destroying again takes the live key; once none is live it answers the last one.
    again_id, at = subjects.destroy_subject_key(tenant, "alice")
    assert again_id == second.key_id
    assert subjects.destroy_subject_key(tenant, "alice") == (again_id, at)


def test_key_ids_follow_from_the_stored_digest(store_folder: Path) -> None:
    """The first key's ID is the subject's digest, as every table stores the subject, so a
    row's stored subject finds its key; a later generation's is another digest of it. Two
    tenants digest one subject differently."""
    acme, globex = new_tenant(), new_tenant()
    digest = digests.subject_digest(acme, "alice@example.com")
    assert len(digest) == 32 and "alice" not in digest
    assert digest != digests.subject_digest(globex, "alice@example.com")
    assert by_digest.key_id_of(acme, digest) == digest
    later = by_digest.key_id_of(acme, digest, 1)
    assert later not in (digest, by_digest.key_id_of(acme, digest, 2))
    assert by_digest.subject_key(acme, digest).key_id == digest
    by_digest.destroy_subject_key(acme, digest)
    assert by_digest.subject_key(acme, digest).key_id == later
