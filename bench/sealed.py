"""Versions written past the API (benchmarks' and tests' bulk loads) are stored as the store
writes them: each text sealed under its subject's key, its search terms hashed
(app/memories/sealing.py, app/memories/search_terms.py)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import psycopg

from app.memories import sealing, search_terms


def stored(conn: psycopg.Connection[Any], tenant_id: uuid.UUID,
           versions: Sequence[tuple[uuid.UUID, str, str]]) -> dict[uuid.UUID, tuple[bytes, str]]:
    """(version ID, subject, text) → the version's `sealed_text` and `search`, one statement
    of lexemes per subject."""
    by_subject: dict[str, list[tuple[uuid.UUID, str]]] = defaultdict(list)
    for version_id, subject, text in versions:
        by_subject[subject].append((version_id, text))
    found: dict[uuid.UUID, tuple[bytes, str]] = {}
    for subject, mine in by_subject.items():
        key = sealing.key_for_writing(tenant_id, subject)
        documents = search_terms.documents(conn, key, [text for _, text in mine])
        for (version_id, text), document in zip(mine, documents, strict=True):
            found[version_id] = (sealing.seal_text(tenant_id, subject, version_id, text),
                                 document)
    return found
