"""A larger subject's keyword list: BM25 over its live memories, computed by the database.

`lethe_bm25` (migrations 0021, 0027) reads the subject's term statistics, kept by triggers as its
memories change, and the matches of the query's terms through the GIN index, rarest terms
first, stopping once no unread memory could enter the list. Small subjects are ranked in
process with the same formula and constants (`small_subjects`, `app.text.bm25`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from app.recall.candidates import PendingLists
from app.text import bm25

_BM25_SQL = """
    SELECT memory_id, score
    FROM lethe_bm25(%(subject)s, %(states)s, %(terms)s::text[], %(n)s, %(k1)s, %(b)s)
    ORDER BY score DESC, memory_id
"""


def send(conn: psycopg.Connection[Any], *, subject: str, states: Sequence[str], n: int,
         terms: Sequence[str]) -> PendingLists:
    """Send the BM25 list: the ``n`` best memories in ``states`` for the query's ``terms``
    (hashed, `search_terms`), as (ID, score)."""
    return PendingLists(vector=None, keyword=conn.execute(_BM25_SQL, {
        "subject": subject, "states": list(states), "terms": list(terms), "n": n,
        "k1": bm25.K1, "b": bm25.B}))
