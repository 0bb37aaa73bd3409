"""What the history machine reads past the API, as the database owner.

`tests/forgetting/dump.py` reads every row of every table into Python; after every step of
hundreds of histories that costs more than the histories. `Residue` asks the same question in
one statement the server answers: which tables still hold one of these words in any column
(every column cast to text, vectors and search vectors included)? Rows of other tenants are
left out, since every history has a tenant of its own and reuses the same marker words;
tables without a tenant column are read whole.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from psycopg import sql

from app.memories import sealing
from tests.harness.model import PREFIX


def _pattern(words: Iterable[str]) -> str | None:
    stems = sorted({re.escape(word[:PREFIX].lower()) for word in words})
    return "(" + "|".join(stems) + ")" if stems else None


class Residue:
    """Finds marker words left in the database, for one tenant at a time."""

    def __init__(self, owner_conn: Any) -> None:
        self.conn = owner_conn
        rows = owner_conn.execute(
            "SELECT c.table_name, bool_or(c.column_name = 'tenant_id') "
            "FROM information_schema.columns c JOIN pg_tables t "
            "ON t.tablename = c.table_name AND t.schemaname = c.table_schema "
            "WHERE c.table_schema = 'public' AND c.table_name <> 'alembic_version' "
            "GROUP BY c.table_name ORDER BY c.table_name").fetchall()
        parts = []
        for table, scoped in rows:
            name = sql.Identifier(table)
            # Texts, metadata and `about` phrases are sealed (app/memories/sealing.py): their
            # bytes match no word, so this finds what is stored in clear elsewhere (stored
            # answers, payloads, subjects and sources); `sealed_holding` opens the sealed ones
            # with the subject's key, which a forget (unlike an erasure) keeps.
            row_text, extra = sql.SQL("r::text"), sql.SQL("")
            if table == "tenant":
                scope = sql.SQL("r.id = %(tenant)s")
            elif scoped:
                scope = sql.SQL("r.tenant_id = %(tenant)s")
            else:
                scope = sql.SQL("true")
            parts.append(sql.SQL(
                "SELECT {label} FROM {name} r WHERE {scope} AND ({row_text} ~* %(anywhere)s"
                "{extra})"
            ).format(label=sql.Literal(table), name=name, scope=scope, row_text=row_text,
                     extra=extra))
        self.statement = sql.SQL("SELECT DISTINCT * FROM (") + sql.SQL(" UNION ALL ").join(
            parts) + sql.SQL(") found")

    def tables_holding(self, tenant_id: str, *, nowhere: set[str],
                       except_about: set[str]) -> list[str]:
        """Tables whose rows of the tenant hold a word of ``nowhere`` anywhere, or a word of
        ``except_about`` anywhere but a retraction's `about` phrase."""
        anywhere = _pattern(nowhere | except_about)
        if anywhere is None:
            return []
        params = {"tenant": tenant_id, "anywhere": anywhere,
                  "nowhere": _pattern(nowhere) or "(?!)"}
        found = {row[0] for row in self.conn.execute(self.statement, params)}
        return sorted(found | self.sealed_holding(tenant_id, nowhere=nowhere,
                                                  except_about=except_about))

    def sealed_holding(self, tenant_id: str, *, nowhere: set[str],
                       except_about: set[str]) -> set[str]:
        """The sealed columns, opened as the store opens them: a forgotten memory's text
        must be gone from the rows, not merely sealed under a key that still exists."""
        anywhere = re.compile(_pattern(nowhere | except_about) or "(?!)", re.IGNORECASE)
        about = re.compile(_pattern(nowhere) or "(?!)", re.IGNORECASE)
        opener = sealing.Opener()
        tenant = uuid.UUID(tenant_id)
        found = set()
        for subject, version_id, sealed in self.conn.execute(
                "SELECT m.subject, v.id, v.sealed_text FROM memory_version v JOIN memory m "
                "ON m.id = v.memory_id WHERE v.tenant_id = %s", (tenant_id,)):
            if anywhere.search(opener.text(tenant, subject, version_id, sealed)):
                found.add("memory_version")
        for subject, memory_id, sealed in self.conn.execute(
                "SELECT subject, id, sealed_metadata FROM memory WHERE tenant_id = %s",
                (tenant_id,)):
            if anywhere.search(repr(opener.metadata(tenant, subject, memory_id, sealed))):
                found.add("memory")
        for subject, retraction_id, sealed in self.conn.execute(
                "SELECT subject, id, sealed_about FROM retraction WHERE tenant_id = %s",
                (tenant_id,)):
            if about.search(opener.about(tenant, subject, retraction_id, sealed) or ""):
                found.add("retraction")
        return found

    def words_in(self, tenant_id: str, table: str, words: set[str]) -> list[str]:
        """Which of ``words`` a table's rows of the tenant hold (to say what leaked)."""
        rows = self.conn.execute(
            sql.SQL("SELECT r::text FROM {} r").format(sql.Identifier(table))).fetchall()
        text = " ".join(row[0] for row in rows if tenant_id in row[0] or table.startswith(
            "kombu")).lower()
        return sorted(word for word in words if word[:PREFIX].lower() in text)


def states(owner_conn: Any, tenant_id: str) -> dict[str, tuple[str, int]]:
    """Every memory row of the tenant: id → (state, revision), past row-level security."""
    return {str(row[0]): (row[1], row[2]) for row in owner_conn.execute(
        "SELECT id, state, revision FROM memory WHERE tenant_id = %s", (tenant_id,))}
