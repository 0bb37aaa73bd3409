"""Subjects and sources stored as keyed digests, with sealed copies for showing; data key IDs
follow from the subject's digest.

Revision ID: 0030_digested_subjects
Revises: 0029_expiry
Create Date: 2026-12-04
"""

import logging
import secrets
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from psycopg.types.json import Jsonb

from app.core import db
from app.keys import digests, sealed_json, subjects, tenant_keys
from app.keys.configured import key_store
from app.keys.errors import KeyDestroyed
from app.memories import sealing

revision: str = "0030_digested_subjects"
down_revision: str | None = "0029_expiry"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

BATCH = 500
# What this revision rewrites (its plaintext left in dead tuples: `lethe migrate` rewrites
# these tables after the commit, `app.core.migrations.REWRITTEN_AFTER`).
TABLES = ("memory", "memory_version", "provenance_edge", "retraction", "legal_hold",
          "access_export", "erasure_request", "source_exclusion", "subject_text",
          "subject_term", "operation")
# Where a sealed JSON value names its data key (`{"sealed", "key"}`, possibly nested).
SEALED_JSON = (("operation", "response_body"), ("operation", "request_payload"),
               ("access_export", "body"))


def upgrade() -> None:
    conn = db.driver_connection(op.get_bind())
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    op.add_column("memory", sa.Column("sealed_subject", sa.LargeBinary(), nullable=False,
                                      server_default=sa.text("''")))
    op.add_column("memory", sa.Column("sealed_source", sa.LargeBinary(), nullable=True))
    op.add_column("legal_hold", sa.Column("sealed_subject", sa.LargeBinary(), nullable=True))
    op.add_column("legal_hold", sa.Column("sealed_source", sa.LargeBinary(), nullable=True))
    op.add_column("erasure_request", sa.Column("sealed_subject", sa.LargeBinary(),
                                               nullable=True))
    op.add_column("source_exclusion", sa.Column("sealed_source", sa.LargeBinary(),
                                                nullable=True))
    _rename_later_keys(conn, _plain_subjects(conn))
    _digest_memories(conn)
    _progress("routes", 0, 1)
    conn.execute("UPDATE memory_version v SET route = lethe_subject_route(m.tenant_id, m.subject)"
                 " FROM memory m WHERE m.id = v.memory_id"
                 " AND v.route <> lethe_subject_route(m.tenant_id, m.subject)")
    _progress("routes", 1, 1)
    _digest_column(conn, "provenance_edge", "parent_ref", digests.source_digest,
                   "parent_kind = 'source'")
    _digest_column(conn, "retraction", "subject", digests.subject_digest)
    _digest_column(conn, "access_export", "subject", digests.subject_digest)
    _digest_holds(conn)
    _digest_erasures(conn)
    _seal_exclusions(conn)
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")


def _progress(what: str, done: int, total: int) -> None:
    log.info("Digesting %s: %d of %d", what, done, total)


def _plain_subjects(conn: Any) -> set[tuple[uuid.UUID, str]]:
    """Every (tenant, subject) still named in clear anywhere."""
    found: set[tuple[uuid.UUID, str]] = set()
    for table in ("memory", "retraction", "legal_hold", "access_export", "erasure_request"):
        found.update((tenant_id, subject) for tenant_id, subject in conn.execute(
            f"SELECT DISTINCT tenant_id, subject FROM {table}"  # noqa: S608 (a constant)
            f" WHERE subject IS NOT NULL AND subject NOT LIKE '{digests.ERASED}%%'"))
    return found


def _old_key_id(tenant_id: uuid.UUID, subject: str, generation: int) -> str:
    """A data key's ID before this revision: the subject's HMAC with its generation."""
    named = subject if generation == 0 else f"{subject}\0{generation}"
    return digests.subject_digest_with(tenant_keys.derived(tenant_id, b"key-id"), named)


def _rename_later_keys(conn: Any, plain: set[tuple[uuid.UUID, str]]) -> None:
    """A subject's first key keeps its ID (the subject's digest was its ID); a later one's
    ID becomes a function of the digest, so a row's stored digest finds it. The old entry is
    destroyed once every sealed value naming it names the new one."""
    store = key_store()
    renamed: dict[str, str] = {}
    moved: list[tuple[uuid.UUID, str]] = []
    for tenant_id, subject in sorted(plain, key=lambda pair: (str(pair[0]), pair[1])):
        digest = digests.subject_digest(tenant_id, subject)
        generation = 1
        while True:
            old = _old_key_id(tenant_id, subject, generation)
            new = subjects.key_id_of(tenant_id, digest, generation)
            try:
                raw = store.load(tenant_id, old)
            except KeyDestroyed:
                # A destroyed key stays destroyed under its new ID too.
                store.create(tenant_id, new, _random_key())
                store.destroy(tenant_id, new)
                generation += 1
                continue
            if raw is None:
                break
            store.create(tenant_id, new, raw)
            renamed[old] = new
            moved.append((tenant_id, old))
            generation += 1
    for table, column in SEALED_JSON:
        for old, new in renamed.items():
            rows = conn.execute(
                f"SELECT ctid, {column} FROM {table}"  # noqa: S608 (constants)
                f" WHERE {column}::text LIKE %s", (f"%{old}%",)).fetchall()
            for ctid, value in rows:
                conn.execute(f"UPDATE {table} SET {column} = %s WHERE ctid = %s",  # noqa: S608
                             (Jsonb(_renamed(value, old, new)), ctid))
    for old, new in renamed.items():
        conn.execute("UPDATE erasure_request SET data_key_id = %s WHERE data_key_id = %s",
                     (new, old))
    for tenant_id, old in moved:
        store.destroy(tenant_id, old)
    if renamed:
        _progress("later data keys renamed", len(renamed), len(renamed))
    subjects.forget_cached()


def _random_key() -> bytes:
    return secrets.token_bytes(subjects.KEY_BYTES)


def _renamed(node: Any, old: str, new: str) -> Any:
    if isinstance(node, dict):
        return {k: (new if k == sealed_json.KEY and v == old else _renamed(v, old, new))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_renamed(item, old, new) for item in node]
    return node


def _batches(conn: Any, query: str) -> Iterator[list[Any]]:
    """``query`` (rows still in clear, first column the row's ID) in batches; each batch must
    be rewritten before the next is read."""
    while True:
        rows = conn.execute(query + " ORDER BY 1 LIMIT %s", (BATCH,)).fetchall()
        if not rows:
            return
        yield rows


def _digest_memories(conn: Any) -> None:
    [total] = conn.execute("SELECT count(*) FROM memory").fetchone()
    done = 0
    for rows in _batches(conn, "SELECT id, tenant_id, subject, source FROM memory"
                               " WHERE sealed_subject = '' AND subject NOT LIKE 'erased:%%'"):
        ids, subject_digests, source_digests, sealed_subjects, sealed_sources = [], [], [], [], []
        for memory_id, tenant_id, subject, source in rows:
            digest = digests.subject_digest(tenant_id, subject)
            ids.append(memory_id)
            subject_digests.append(digest)
            source_digests.append(digests.optional_source(tenant_id, source))
            sealed_subjects.append(sealing.seal_subject(tenant_id, digest, memory_id, subject))
            sealed_sources.append(sealing.seal_source(
                tenant_id, digest, memory_id,
                None if source is None or source.startswith(digests.ERASED) else source))
        # The triggers of 0021 move each live memory's statistics to its digested subject.
        conn.execute(
            "UPDATE memory m SET subject = u.subject, source = u.source,"
            " sealed_subject = u.sealed_subject, sealed_source = u.sealed_source"
            " FROM unnest(%s::uuid[], %s::text[], %s::text[], %s::bytea[], %s::bytea[])"
            " AS u(id, subject, source, sealed_subject, sealed_source) WHERE m.id = u.id",
            (ids, subject_digests, source_digests, sealed_subjects, sealed_sources))
        done += len(rows)
        _progress("memories", done, total)
    # Tombstones of an erasure: their stand-ins stay; a source still in clear is digested.
    _digest_column(conn, "memory", "source", digests.source_digest,
                   f"subject LIKE '{digests.ERASED}%%'")


def _digest_column(conn: Any, table: str, column: str, digest: Any, where: str = "TRUE"
                   ) -> None:
    """Every value of ``column`` in clear replaced by its digest (stand-ins kept)."""
    pending = (f"SELECT DISTINCT tenant_id, {column} FROM {table}"  # noqa: S608 (constants)
               f" WHERE {where} AND {column} IS NOT NULL AND {column} NOT LIKE 'erased:%%'")
    rows = conn.execute(pending).fetchall()
    for start in range(0, len(rows), BATCH):
        batch = rows[start:start + BATCH]
        conn.execute(
            f"UPDATE {table} t SET {column} = u.digest"  # noqa: S608 (constants)
            " FROM unnest(%s::uuid[], %s::text[], %s::text[]) AS u(tenant_id, plain, digest)"
            f" WHERE {where} AND t.tenant_id = u.tenant_id AND t.{column} = u.plain",
            ([row[0] for row in batch], [row[1] for row in batch],
             [digest(row[0], row[1]) for row in batch]))
        _progress(f"{table}.{column}", start + len(batch), len(rows))


def _digest_holds(conn: Any) -> None:
    rows = conn.execute(
        "SELECT id, tenant_id, subject, source FROM legal_hold"
        " WHERE (subject IS NOT NULL AND subject NOT LIKE 'erased:%%' AND sealed_subject IS NULL)"
        " OR (source IS NOT NULL AND source NOT LIKE 'erased:%%' AND sealed_source IS NULL)"
    ).fetchall()
    for hold_id, tenant_id, subject, source in rows:
        conn.execute(
            "UPDATE legal_hold SET subject = %s, source = %s, sealed_subject = %s,"
            " sealed_source = %s WHERE id = %s",
            (digests.optional_subject(tenant_id, subject),
             digests.optional_source(tenant_id, source),
             *sealing.seal_hold_names(tenant_id, hold_id, subject, source), hold_id))
    _progress("legal holds", len(rows), len(rows))


def _digest_erasures(conn: Any) -> None:
    rows = conn.execute(
        "SELECT id, tenant_id, subject FROM erasure_request"
        " WHERE subject IS NOT NULL AND sealed_subject IS NULL").fetchall()
    for request_id, tenant_id, subject in rows:
        digest = digests.subject_digest(tenant_id, subject)
        conn.execute("UPDATE erasure_request SET subject = %s, sealed_subject = %s WHERE id = %s",
                     (digest, sealing.seal(tenant_id, digest,
                                           ("erasure_request", request_id, "subject"), subject),
                      request_id))
    _progress("open erasure requests", len(rows), len(rows))


def _seal_exclusions(conn: Any) -> None:
    rows = conn.execute("SELECT id, tenant_id, source FROM source_exclusion"
                        " WHERE source IS NOT NULL").fetchall()
    for exclusion_id, tenant_id, source in rows:
        conn.execute("UPDATE source_exclusion SET source = NULL, sealed_source = %s"
                     " WHERE id = %s",
                     (sealing.seal_tenant_name(tenant_id, ("source_exclusion", exclusion_id,
                                                           "source"), source), exclusion_id))
    _progress("source exclusions", len(rows), len(rows))


def downgrade() -> None:
    """The strings back from their sealed copies; a digest no row keeps a copy of (a
    retraction or an access export of a subject with no memory left) stays a digest, and
    later-generation keys keep their new IDs."""
    conn = db.driver_connection(op.get_bind())
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    opener = sealing.Opener()
    subjects_of: dict[tuple[uuid.UUID, str], str] = {}
    sources_of: dict[tuple[uuid.UUID, str], str] = {}
    for memory_id, tenant_id, subject, source, sealed_subject, sealed_source in conn.execute(
            "SELECT id, tenant_id, subject, source, sealed_subject, sealed_source FROM memory"
            " WHERE sealed_subject <> ''").fetchall():
        plain = opener.subject(tenant_id, subject, memory_id, sealed_subject)
        if not plain.startswith(digests.ERASED):
            subjects_of[(tenant_id, subject)] = plain
        shown = opener.source(tenant_id, subject, memory_id, source, sealed_source)
        if source is not None and shown is not None and not shown.startswith(digests.ERASED):
            sources_of[(tenant_id, source)] = shown
    for hold_id, tenant_id, subject, source, sealed_subject, sealed_source in conn.execute(
            "SELECT id, tenant_id, subject, source, sealed_subject, sealed_source"
            " FROM legal_hold").fetchall():
        if subject is not None and sealed_subject:
            subjects_of[(tenant_id, subject)] = opener.name(
                tenant_id, subject, ("legal_hold", hold_id, "subject"), subject, sealed_subject)
        if source is not None and sealed_source:
            sources_of[(tenant_id, source)] = sealing.open_tenant_name(
                tenant_id, ("legal_hold", hold_id, "source"), sealed_source) or source
    for request_id, tenant_id, subject, sealed_subject in conn.execute(
            "SELECT id, tenant_id, subject, sealed_subject FROM erasure_request"
            " WHERE subject IS NOT NULL").fetchall():
        subjects_of[(tenant_id, subject)] = opener.name(
            tenant_id, subject, ("erasure_request", request_id, "subject"), subject,
            sealed_subject)
    for table, column, mapping, where in (
            ("memory", "subject", subjects_of, "TRUE"),
            ("memory", "source", sources_of, "TRUE"),
            ("retraction", "subject", subjects_of, "TRUE"),
            ("access_export", "subject", subjects_of, "TRUE"),
            ("legal_hold", "subject", subjects_of, "TRUE"),
            ("legal_hold", "source", sources_of, "TRUE"),
            ("erasure_request", "subject", subjects_of, "TRUE"),
            ("provenance_edge", "parent_ref", sources_of, "parent_kind = 'source'")):
        pairs = sorted(mapping.items(), key=lambda item: (str(item[0][0]), item[0][1]))
        if pairs:
            conn.execute(
                f"UPDATE {table} t SET {column} = u.plain"  # noqa: S608 (constants)
                " FROM unnest(%s::uuid[], %s::text[], %s::text[]) AS u(tenant_id, digest, plain)"
                f" WHERE {where} AND t.tenant_id = u.tenant_id AND t.{column} = u.digest",
                ([tenant for (tenant, _), _ in pairs], [digest for (_, digest), _ in pairs],
                 [plain for _, plain in pairs]))
    for exclusion_id, tenant_id, sealed_source in conn.execute(
            "SELECT id, tenant_id, sealed_source FROM source_exclusion"
            " WHERE sealed_source IS NOT NULL").fetchall():
        conn.execute("UPDATE source_exclusion SET source = %s WHERE id = %s", (
            sealing.open_tenant_name(tenant_id, ("source_exclusion", exclusion_id, "source"),
                                     sealed_source), exclusion_id))
    conn.execute("UPDATE memory_version v SET route = lethe_subject_route(m.tenant_id, m.subject)"
                 " FROM memory m WHERE m.id = v.memory_id")
    op.drop_column("memory", "sealed_subject")
    op.drop_column("memory", "sealed_source")
    op.drop_column("legal_hold", "sealed_subject")
    op.drop_column("legal_hold", "sealed_source")
    op.drop_column("erasure_request", "sealed_subject")
    op.drop_column("source_exclusion", "sealed_source")
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
