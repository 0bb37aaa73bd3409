"""Stored texts read past the API, as the database owner: they are sealed under their
subject's key (app/memories/sealing.py), so they are opened here as the store opens them."""

from __future__ import annotations

from typing import Any

from app.memories import sealing

_VERSIONS = ("SELECT m.tenant_id, m.subject, v.id, v.sealed_text FROM memory m"
             " JOIN memory_version v ON {join} WHERE {where} ORDER BY v.memory_id, v.seq")


def texts(owner_conn: Any, where: str = "true", params: Any = (), *,
          current: bool = False) -> list[str]:
    """The texts of the versions ``where`` picks (`m` the memory, `v` the version; only
    current versions when ``current``), by memory and seq; a purged one is ''."""
    join = "v.id = m.current_version_id" if current else "v.memory_id = m.id"
    return [sealing.open_text(tenant_id, subject, version_id, sealed)
            for tenant_id, subject, version_id, sealed in owner_conn.execute(
                _VERSIONS.format(join=join, where=where), params)]
