"""Keyword search over keyed hashes: what `memory_version.search` holds instead of words.

A text's terms are PostgreSQL's english lexemes (`to_tsvector('english', …)`, the one
tokenizer of keyword search), computed by a SELECT whose parameter is neither stored nor
written to the WAL, then each lexeme is replaced by its keyed hash under the subject's data
key (`SubjectKey.term`). The stored tsvector keeps every lexeme's positions, so a text's
length in terms and each term's frequency — all BM25 reads — are what they were, and the
per-subject statistics (`subject_term`, migration 0021) count hashes as they counted words.
A query's lexemes are hashed with the same key, so matches and rankings are unchanged; one
subject's hashes say nothing of another's, and nothing once the key is destroyed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg

from app.keys import subjects
from app.keys.subjects import SubjectKey

# Each text's lexemes with their positions, texts numbered from 1.
_LEXEMES_SQL = """
    SELECT t.i, u.lexeme, u.positions
    FROM unnest(%(texts)s::text[]) WITH ORDINALITY AS t(text, i)
    CROSS JOIN LATERAL unnest(to_tsvector('english', t.text)) AS u
"""
_QUERY_SQL = "SELECT tsvector_to_array(to_tsvector('english', %(text)s::text))"

Lexemes = list[tuple[str, list[int] | None]]


def lexemes(conn: psycopg.Connection[Any], texts: Sequence[str]) -> list[Lexemes]:
    """Each text's english lexemes with their positions, in one statement."""
    found: list[Lexemes] = [[] for _ in texts]
    if texts:
        for index, lexeme, positions in conn.execute(_LEXEMES_SQL, {"texts": list(texts)}):
            found[index - 1].append((lexeme, positions))
    return found


def document(key: SubjectKey, terms: Lexemes) -> str:
    """The tsvector literal of a text's hashed terms (hex needs no quoting), positions kept."""
    return " ".join(
        key.term(lexeme) + (":" + ",".join(map(str, positions)) if positions else "")
        for lexeme, positions in terms)


def documents(conn: psycopg.Connection[Any], key: SubjectKey, texts: Sequence[str]) -> list[str]:
    """`document` of each text, under one subject's key."""
    return [document(key, terms) for terms in lexemes(conn, texts)]


def query_terms(conn: psycopg.Connection[Any], *, tenant_id: uuid.UUID, subject: str,
                query: str) -> list[str]:
    """A query's distinct terms hashed under the subject's key; none when the subject has
    no key (it never had a memory, or its key was destroyed): nothing could match them."""
    try:
        key = subjects.subject_key(tenant_id, subject, create=False)
    except (LookupError, subjects.KeyDestroyed):
        return []
    row = conn.execute(_QUERY_SQL, {"text": query}).fetchone()
    return sorted({key.term(lexeme) for lexeme in (row[0] if row else [])})
