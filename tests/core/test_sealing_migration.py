"""Migration 0027 seals what earlier revisions stored in clear, and leaves no table file
holding it."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from sqlalchemy.engine import make_url

from app.core import migrations
from app.keys import digests, subjects
from app.memories import sealing
from tests.core.test_migrations import scratch_runtime  # noqa: F401 (a fixture)

BEFORE = "0025_console_session_generation"
SUBJECT = "user:before"
TEXT = "I collect qzvintage7 sneakers and qzvintage7 caps."
METADATA = {"note": "qzmetadata7"}
ABOUT = "the qzabout7 hobby"
MARKERS = (b"qzvintage7", b"qzmetadata7", b"qzabout7")
TABLES = ("memory", "memory_version", "retraction", "subject_term", "subject_text")


def _connect(runtime: Any) -> psycopg.Connection[Any]:
    url = make_url(runtime.owner_url).set(drivername="postgresql").render_as_string(False)
    return psycopg.connect(url, autocommit=True)


def _seed(conn: psycopg.Connection[Any], tenant_id: uuid.UUID) -> tuple[uuid.UUID, uuid.UUID,
                                                                        uuid.UUID]:
    memory_id, version_id, retraction_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with conn.transaction():
        conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (str(tenant_id),))
        conn.execute("INSERT INTO tenant (id, name, digest_key) VALUES (%s, 'Before', %s)",
                     (tenant_id, uuid.uuid4().bytes * 2))
        conn.execute("INSERT INTO memory (id, tenant_id, subject, volatility, state, revision,"
                     " metadata) VALUES (%s, %s, %s, 'preferential', 'active', 1, %s)",
                     (memory_id, tenant_id, SUBJECT, Jsonb(METADATA)))
        conn.execute("INSERT INTO memory_version (id, tenant_id, memory_id, seq, text)"
                     " VALUES (%s, %s, %s, 1, %s)", (version_id, tenant_id, memory_id, TEXT))
        conn.execute("UPDATE memory SET current_version_id = %s WHERE id = %s",
                     (version_id, memory_id))
        conn.execute("INSERT INTO retraction (id, tenant_id, subject, about, memory_count)"
                     " VALUES (%s, %s, %s, %s, 0)", (retraction_id, tenant_id, SUBJECT, ABOUT))
    return memory_id, version_id, retraction_id


def test_stored_texts_are_sealed_their_terms_hashed_and_the_old_pages_rewritten(
    scratch_runtime: Any,  # noqa: F811
) -> None:
    migrations.upgrade(scratch_runtime, revision=BEFORE)
    tenant_id = uuid.uuid4()
    with _connect(scratch_runtime) as conn:
        memory_id, version_id, retraction_id = _seed(conn, tenant_id)
        [plain_terms] = conn.execute("SELECT array_agg(term ORDER BY term) FROM subject_term"
                                     ).fetchone() or [None]
        assert "qzvintage7" in plain_terms
        migrations.upgrade(scratch_runtime)

        # Stored since 0030 as its digest, which names its key.
        digest = digests.subject_digest(tenant_id, SUBJECT)
        key = subjects.subject_key(tenant_id, digest, create=False)
        sealed_text, search, stored_metadata = conn.execute(
            "SELECT v.sealed_text, v.search::text, m.sealed_metadata FROM memory_version v"
            " JOIN memory m ON m.id = v.memory_id WHERE v.id = %s", (version_id,)).fetchone()
        assert sealing.open_text(tenant_id, digest, version_id, sealed_text) == TEXT
        assert sealing.open_metadata(tenant_id, digest, memory_id, stored_metadata) == METADATA
        [sealed_about] = conn.execute("SELECT sealed_about FROM retraction WHERE id = %s",
                                      (retraction_id,)).fetchone() or [None]
        assert sealing.open_about(tenant_id, digest, retraction_id, sealed_about) == ABOUT
        # The same lexemes, positions and statistics, as keyed hashes.
        hashed = sorted(key.term(term) for term in plain_terms)
        assert conn.execute("SELECT array_agg(term ORDER BY term) FROM subject_term"
                            ).fetchone() == (hashed,)
        assert search == conn.execute(
            "SELECT string_agg(format('''%%s'':%%s', t, p), ' ' ORDER BY t)"
            " FROM unnest(%s::text[], %s::text[]) AS u(t, p)",
            ([key.term("qzvintage7"), key.term("sneaker"), key.term("cap"), key.term("collect")],
             ["3,6", "4", "7", "2"])).fetchone()[0]
        assert conn.execute("SELECT memories, length FROM subject_text").fetchone() == (1, 5)

        assert markers_in_tables(conn, TABLES, MARKERS) == {}


def markers_in_tables(conn: psycopg.Connection[Any], tables: Sequence[str],
                      markers: Sequence[bytes]) -> dict[str, list[bytes]]:
    """After a CHECKPOINT, which of ``markers`` each file of ``tables`` and their indexes
    holds (files holding none left out)."""
    conn.execute("CHECKPOINT")
    folder = Path(conn.execute("SELECT current_setting('data_directory')").fetchone()[0])
    files = [folder / row[0] for row in conn.execute(
        "SELECT pg_relation_filepath(c.oid) FROM pg_class c"
        " LEFT JOIN pg_index i ON i.indexrelid = c.oid"
        " WHERE c.relname = ANY(%s) OR i.indrelid = ANY(SELECT oid FROM pg_class"
        "  WHERE relname = ANY(%s) AND relnamespace = 'public'::regnamespace)",
        (list(tables), list(tables)))]
    assert len(files) > len(tables)
    held = {path.name: [m for m in markers if m in path.read_bytes()]
            for path in files if path.exists()}
    return {name: found for name, found in held.items() if found}
