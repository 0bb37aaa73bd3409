"""Migration 0030 stores subjects and sources as keyed digests, with sealed copies where a row
shows them, and leaves no table file holding them."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from app.core import migrations
from app.keys import digests, subjects, tenant_keys
from app.keys.configured import key_store
from app.keys.errors import KeyDestroyed
from app.memories import sealing
from app.memories import store as memories
from tests.core.test_migrations import scratch_runtime  # noqa: F401 (a fixture)
from tests.core.test_sealing_migration import BEFORE, _connect, _seed, markers_in_tables

SUBJECT = "user:before"  # what _seed writes
SOURCE = "crm:qzsource7"
HELD = "user:qzheld7"
HELD_SOURCE = "mail:qzheldsource7"
ERASED = "user:qzerased7"
EXCLUDED = "feed:qzexcluded7"
MARKERS = [m.encode() for m in ("user:before", "qzsource7", "qzheld7", "qzheldsource7",
                                 "qzerased7", "qzexcluded7")]
TABLES = ("memory", "memory_version", "provenance_edge", "retraction", "legal_hold",
          "erasure_request", "source_exclusion", "subject_term", "subject_text")


def _seed_names(conn: psycopg.Connection[Any], tenant_id: uuid.UUID, memory_id: uuid.UUID
                ) -> dict[str, uuid.UUID]:
    ids = {name: uuid.uuid4() for name in ("subject_hold", "source_hold", "erasure",
                                           "exclusion")}
    with conn.transaction():
        conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (str(tenant_id),))
        conn.execute("UPDATE memory SET source = %s WHERE id = %s", (SOURCE, memory_id))
        conn.execute("INSERT INTO provenance_edge (id, tenant_id, child_kind, child_id,"
                     " parent_kind, parent_ref) VALUES (%s, %s, 'memory', %s, 'source', %s)",
                     (uuid.uuid4(), tenant_id, memory_id, SOURCE))
        conn.execute("INSERT INTO legal_hold (id, tenant_id, scope, subject, reason, created_by)"
                     " VALUES (%s, %s, 'subject', %s, 'case', 'test')",
                     (ids["subject_hold"], tenant_id, HELD))
        conn.execute("INSERT INTO legal_hold (id, tenant_id, scope, source, reason, created_by)"
                     " VALUES (%s, %s, 'source', %s, 'case', 'test')",
                     (ids["source_hold"], tenant_id, HELD_SOURCE))
        conn.execute("INSERT INTO erasure_request (id, tenant_id, subject, subject_digest,"
                     " status, filed_by, due_at) VALUES (%s, %s, %s, %s, 'pending_approval',"
                     " 'test', now() + interval '1 day')",
                     (ids["erasure"], tenant_id, ERASED, "e" * 64))
        conn.execute("INSERT INTO source_exclusion (id, tenant_id, source, source_digest)"
                     " VALUES (%s, %s, %s, %s)", (ids["exclusion"], tenant_id, EXCLUDED, "f" * 64))
    return ids


def test_subjects_and_sources_are_digested_sealed_and_the_old_pages_rewritten(
    scratch_runtime: Any,  # noqa: F811
) -> None:
    migrations.upgrade(scratch_runtime, revision=BEFORE)
    tenant_id = uuid.uuid4()
    with _connect(scratch_runtime) as conn:
        memory_id, _, retraction_id = _seed(conn, tenant_id)
        ids = _seed_names(conn, tenant_id, memory_id)
        migrations.upgrade(scratch_runtime)

        digest = digests.subject_digest(tenant_id, SUBJECT)
        source = digests.source_digest(tenant_id, SOURCE)
        # The first data key's ID is the digest: the key the texts were sealed under.
        assert subjects.subject_key(tenant_id, digest, create=False).key_id == digest
        with conn.cursor(row_factory=dict_row) as rows:
            row = rows.execute(
                f"SELECT {memories.PUBLIC_COLUMNS} FROM memory m JOIN memory_version v"
                " ON v.id = m.current_version_id WHERE m.id = %s", (memory_id,)).fetchone()
        assert row is not None and (row["subject"], row["source"]) == (digest, source)
        shown = memories.public(row)  # what the API shows
        assert (shown.subject, shown.source, shown.text) == (
            SUBJECT, SOURCE, "I collect qzvintage7 sneakers and qzvintage7 caps.")
        assert conn.execute(
            "SELECT bool_and(v.route = lethe_subject_route(m.tenant_id, %s))"
            " FROM memory_version v JOIN memory m ON m.id = v.memory_id", (digest,)
        ).fetchone() == (True,)
        assert conn.execute("SELECT subject FROM subject_text").fetchall() == [(digest,)]
        assert conn.execute("SELECT parent_ref FROM provenance_edge").fetchall() == [(source,)]
        assert conn.execute("SELECT subject FROM retraction WHERE id = %s",
                            (retraction_id,)).fetchone() == (digest,)
        opener = sealing.Opener()
        held_digest = digests.subject_digest(tenant_id, HELD)
        subject_hold = conn.execute(
            "SELECT subject, sealed_subject FROM legal_hold WHERE id = %s",
            (ids["subject_hold"],)).fetchone()
        assert subject_hold is not None and subject_hold[0] == held_digest
        assert opener.name(tenant_id, held_digest, ("legal_hold", ids["subject_hold"], "subject"),
                           held_digest, subject_hold[1]) == HELD
        source_hold = conn.execute("SELECT source, sealed_source FROM legal_hold WHERE id = %s",
                                   (ids["source_hold"],)).fetchone()
        assert source_hold is not None
        assert source_hold[0] == digests.source_digest(tenant_id, HELD_SOURCE)
        assert sealing.open_tenant_name(tenant_id, ("legal_hold", ids["source_hold"], "source"),
                                        source_hold[1]) == HELD_SOURCE
        erasure = conn.execute("SELECT subject, sealed_subject FROM erasure_request"
                               " WHERE id = %s", (ids["erasure"],)).fetchone()
        erased_digest = digests.subject_digest(tenant_id, ERASED)
        assert erasure is not None and erasure[0] == erased_digest
        assert opener.name(tenant_id, erased_digest, ("erasure_request", ids["erasure"],
                                                      "subject"), erased_digest,
                           erasure[1]) == ERASED
        exclusion = conn.execute("SELECT source, sealed_source FROM source_exclusion"
                                 " WHERE id = %s", (ids["exclusion"],)).fetchone()
        assert exclusion is not None and exclusion[0] is None
        assert sealing.open_tenant_name(tenant_id, ("source_exclusion", ids["exclusion"],
                                                    "source"), exclusion[1]) == EXCLUDED

        assert markers_in_tables(conn, TABLES, MARKERS) == {}


def test_a_later_generation_key_is_found_by_its_new_id_and_the_old_one_destroyed(
    scratch_runtime: Any,  # noqa: F811
) -> None:
    """A subject erased once and written again before 0030 has its second key under an ID
    made of the subject itself; 0030 moves it under the ID made of the digest (where every
    Opener looks), and destroys the old entry."""
    migrations.upgrade(scratch_runtime, revision="0027_sealed_content")
    tenant_id, subject = uuid.uuid4(), "user:again"
    tenant_keys.create_tenant_key(tenant_id)
    store = key_store()
    digest = digests.subject_digest(tenant_id, subject)
    store.create(tenant_id, digest, secrets.token_bytes(32))
    store.destroy(tenant_id, digest)  # the first key, destroyed by an erasure
    old = digests.subject_digest_with(tenant_keys.derived(tenant_id, b"key-id"),
                                      f"{subject}\0{1}")
    raw = store.create(tenant_id, old, secrets.token_bytes(32))
    memory_id, version_id = uuid.uuid4(), uuid.uuid4()
    sealed = subjects.SubjectKey(old, raw, 1).seal(
        b"Moved to Braga.", aad=subjects.row_aad("memory_version", version_id, "text"))
    with _connect(scratch_runtime) as conn:
        with conn.transaction():
            conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (str(tenant_id),))
            conn.execute("INSERT INTO tenant (id, name) VALUES (%s, 'Again')", (tenant_id,))
            conn.execute("INSERT INTO memory (id, tenant_id, subject, volatility, state,"
                         " revision) VALUES (%s, %s, %s, 'preferential', 'active', 1)",
                         (memory_id, tenant_id, subject))
            conn.execute("INSERT INTO memory_version (id, tenant_id, memory_id, seq, sealed_text)"
                         " VALUES (%s, %s, %s, 1, %s)", (version_id, tenant_id, memory_id, sealed))
            conn.execute("UPDATE memory SET current_version_id = %s WHERE id = %s",
                         (version_id, memory_id))
        subjects.forget_cached()
        migrations.upgrade(scratch_runtime)
        key = subjects.subject_key(tenant_id, digest, create=False)
        assert (key.key_id, key.generation) == (subjects.key_id_of(tenant_id, digest, 1), 1)
        assert key.key_id != old
        with pytest.raises(KeyDestroyed):
            store.load(tenant_id, old)
        with conn.cursor(row_factory=dict_row) as rows:
            row = rows.execute(
                f"SELECT {memories.PUBLIC_COLUMNS} FROM memory m JOIN memory_version v"
                " ON v.id = m.current_version_id WHERE m.id = %s", (memory_id,)).fetchone()
        assert row is not None
        shown = memories.public(row)
        assert (shown.subject, shown.text) == (subject, "Moved to Braga.")
