"""A version's embedding stays in its row (migration 0009): reading a distance from the heap
must not cost a second lookup in the TOAST table."""

from __future__ import annotations

from typing import Any

import psycopg

# With the text and its tsvector, a version of this text is ≈ 2.6 kB: over PostgreSQL's default
# 2 kB threshold, under which the vector would have been moved out of line.
TEXT = ("Prefers window seats on long flights, books them weeks ahead, and asks for a vegetarian "
        "meal; dislikes layovers in Frankfurt and always carries a paper book. ") * 6


def test_new_versions_keep_their_embedding_inline(
    client: Any, tenant: dict[str, Any], owner_conn: psycopg.Connection[Any]
) -> None:
    for index in range(3):
        response = client.post("/v1/memories", headers={
            **tenant["app"], "Idempotency-Key": f"long-{index}"},
            json={"subject": "user:traveller", "text": f"{index}. {TEXT}"})
        assert response.status_code == 201, response.text
    stored = owner_conn.execute(
        "SELECT pg_column_size(v.*), pg_column_size(embedding) FROM memory_version v").fetchall()
    assert len(stored) == 3 and all(row > 2100 and vector > 1500 for row, vector in stored)
    toast = owner_conn.execute(
        "SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE relname = 'memory_version'"
    ).fetchone()
    assert toast == (0,)
