"""Memories written past the API (benchmarks' and tests' bulk loads) are stored as the store
writes them: the subject as its keyed digest beside a sealed copy, each text sealed under the
subject's key, its search terms hashed (app/keys/digests.py, app/memories/sealing.py,
app/memories/search_terms.py). Subjects are given here as a request names them."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import psycopg

from app.keys import digests
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
        subject = digests.subject_digest(tenant_id, subject)
        key = sealing.key_for_writing(tenant_id, subject)
        documents = search_terms.documents(conn, key, [text for _, text in mine])
        for (version_id, text), document in zip(mine, documents, strict=True):
            found[version_id] = (sealing.seal_text(tenant_id, subject, version_id, text),
                                 document)
    return found


def subject(tenant_id: uuid.UUID, memory_id: uuid.UUID, named: str) -> tuple[str, bytes]:
    """A memory's `subject` and `sealed_subject` columns for the subject ``named``."""
    digest = digests.subject_digest(tenant_id, named)
    return digest, sealing.seal_subject(tenant_id, digest, memory_id, named)
