"""The lists (IVFFlat) index: built once the table is large enough, rebuilt as it grows, and
walked by recall for a large subject in place of the HNSW index.

The size limits are lowered here (a thousand memories count as large), as in
test_large_subjects.py, whose seeded subjects these tests reuse.
"""

from __future__ import annotations

import json
import math
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from app.core import db
from app.core.celery_app import celery_app
from app.core.models import utcnow
from app.keys import digests
from app.memories.models import EMBEDDING_DIMENSIONS
from app.recall import candidates, tasks, vector_lists
from bench.synthetic import QUERIES
from tests.recall import bulk
from tests.recall.test_large_subjects import (
    PLANTED,
    PRICED_OUT_SORT,
    _ask,
    _scans,
    seeded,  # noqa: F401 (a fixture)
)


def _indexes(owner_conn: psycopg.Connection[Any]) -> dict[str, tuple[bool, list[str] | None]]:
    """The IVFFlat indexes on the versions: name → (valid, reloptions)."""
    return {name: (valid, options) for name, valid, options in owner_conn.execute(
        "SELECT c.relname, i.indisvalid, c.reloptions FROM pg_index i"
        " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
        " WHERE i.indrelid = 'memory_version'::regclass AND a.amname = 'ivfflat'")}


def _drop_all(owner_conn: psycopg.Connection[Any]) -> None:
    for name in _indexes(owner_conn):
        owner_conn.execute(f'DROP INDEX IF EXISTS "{name}"')


@pytest.fixture
def no_lists_index(owner_conn: psycopg.Connection[Any]) -> Iterator[None]:
    """No lists index before or after (other tests walk the HNSW index), and the table's
    estimate fresh, as autovacuum would keep it."""
    _drop_all(owner_conn)
    owner_conn.execute("ANALYZE memory_version")
    yield
    _drop_all(owner_conn)


@pytest.fixture
def lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any table is large enough to build for, and any subject past 500 memories walks (here
    the walk probes every list, and the test database holds other tests' versions too)."""
    monkeypatch.setattr(candidates, "EXACT_UP_TO", 500)
    monkeypatch.setattr(candidates, "LISTS_ROW_COST", 0.0)
    monkeypatch.setattr(vector_lists, "min_versions", lambda: 1)


@pytest.mark.parametrize(("memories", "versions", "lists", "probes", "walks"), [
    (50_000, 100_000, 100, 32, True),  # the benchmark's: 32 lists hold ≈ 16,000 of its vectors
    (30_000, 100_000, 100, 54, True),
    (20_000, 100_000, 100, 80, False),  # up to EXACT_UP_TO: sorted
    (500_000, 10_000_000, 3_162, 102, True),
    # 1 % of the index: 16,000 of its vectors are spread over a sixth of the lists, and
    # reading a sixth of ten million versions costs more than sorting 100,000 rows.
    (100_000, 10_000_000, 3_162, 506, False),
    (21_000, 21_000, 21, 16, True),  # a small table: 16 of its 21 lists
])
def test_a_walk_probes_lists_holding_a_fixed_share_of_the_subject_if_cheaper_than_a_sort(
    memories: int, versions: int, lists: int, probes: int, walks: bool,
) -> None:
    size = candidates.SubjectSize(memories=memories, versions=versions,
                                  lists_index=candidates.ListsIndex(lists, datetime.now(UTC)))
    assert candidates.probes(lists, memories) == probes
    assert size.walks() is walks
    assert vector_lists.wanted_lists(versions) == lists


def test_without_a_lists_index_a_subject_past_the_limit_walks_the_hnsw_index() -> None:
    """Whatever its share of the index: the index is routed by subject (migration 0014)."""
    assert candidates.SubjectSize(memories=50_000, versions=100_000).walks()
    assert candidates.SubjectSize(memories=50_000, versions=10_000_000).walks()
    assert not candidates.SubjectSize(memories=20_000, versions=20_000).walks()


def test_no_index_while_no_subject_could_be_walked(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(candidates, "EXACT_UP_TO", 10_000_000)
    assert vector_lists.ensure(owner_conn) is None
    assert _indexes(owner_conn) == {}


def test_built_for_the_table_then_left_alone_until_it_grows(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The seeded versions counted before the build: counted after it, they read as churn.
    _write_versions(owner_conn, seeded, 0)
    built = vector_lists.ensure(owner_conn)
    assert built is not None and built.replaced is None and built.reason == "new"
    assert built.lists == vector_lists.wanted_lists(built.versions) == vector_lists.MIN_LISTS
    assert _indexes(owner_conn) == {vector_lists.INDEX: (True, [f"lists={built.lists}"])}
    assert vector_lists.current_lists(owner_conn) == built.lists
    assert vector_lists.ensure(owner_conn) is None  # nothing to do

    # Twice the lists the index has: built again, under the same name, the old one gone.
    monkeypatch.setattr(vector_lists, "ROWS_PER_LIST", built.versions // (2 * built.lists))
    again = vector_lists.ensure(owner_conn)
    assert again is not None and again.replaced == built.lists and again.reason == "size"
    assert again.lists >= 2 * built.lists
    assert _indexes(owner_conn) == {vector_lists.INDEX: (True, [f"lists={again.lists}"])}


def _write_versions(owner_conn: psycopg.Connection[Any], tenant_id: uuid.UUID, count: int) -> None:
    """``count`` more versions, counted at once by PostgreSQL's statistics (with what this
    session wrote before)."""
    if count:
        bulk.load(owner_conn, tenant_id, [(uuid.uuid4(), "user:churn", f"fact {index}", None)
                                          for index in range(count)])
    owner_conn.execute("SELECT pg_stat_force_next_flush()")
    owner_conn.execute("SELECT 1")


def test_rebuilt_once_a_share_of_what_it_was_built_over_has_been_written_since(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table's size calls for the same lists throughout; its content turns over."""
    monkeypatch.setattr(vector_lists, "ROWS_PER_LIST", 10**9)
    _write_versions(owner_conn, seeded, 0)  # the seeded versions counted before the build
    built = vector_lists.ensure(owner_conn)
    assert built is not None
    assert vector_lists.ensure(owner_conn) is None
    _write_versions(owner_conn, seeded, int(vector_lists.CHURN_SHARE * built.versions) // 2)
    assert vector_lists.ensure(owner_conn) is None
    _write_versions(owner_conn, seeded, int(vector_lists.CHURN_SHARE * built.versions))
    again = vector_lists.ensure(owner_conn)
    assert again is not None and again.reason == "churn" and again.lists == built.lists
    assert vector_lists.ensure(owner_conn) is None  # counted from the new build


def test_churn_is_a_tenth_of_the_versions_the_index_was_built_over_written_since(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(candidates, "EXACT_UP_TO", 500)
    built = {"versions": 1_000, "inserts": 5_000}
    assert not vector_lists.churned(built, 5_100)
    assert vector_lists.churned(built, 5_101)
    # Never less than a tenth of a table large enough to build for.
    assert not vector_lists.churned({"versions": 100, "inserts": 0}, 50)
    assert vector_lists.churned({"versions": 100, "inserts": 0}, 51)


def test_a_reset_of_the_statistics_starts_the_count_again(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A record counting from more inserts than the table has had (its statistics were reset
    since) is written again, keeping the build's time, with no build."""
    monkeypatch.setattr(vector_lists, "ROWS_PER_LIST", 10**9)
    assert vector_lists.ensure(owner_conn) is not None
    built = vector_lists._recorded(owner_conn)
    assert built is not None
    owner_conn.execute(f"""COMMENT ON INDEX {vector_lists.INDEX} IS '{json.dumps(
        {**built, "inserts": 10**12})}'""")
    assert vector_lists.ensure(owner_conn) is None
    assert vector_lists._recorded(owner_conn) == {
        **built, "inserts": vector_lists._inserts(owner_conn)}


@pytest.mark.parametrize("comment", [
    '{"versions": 1, "inserts": 1}',  # a record from before build times were kept
    "built by hand", '{"built_at": "yesterday"}',
])
def test_an_index_without_a_record_of_its_build_time_is_not_walked_and_is_built_again(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None, comment: str,
) -> None:
    """Without the build's time recall cannot know which memories its centroids may not
    describe, so it does not walk that index (a walk of the HNSW index serves meanwhile), and
    the next check builds one with a record."""
    built = vector_lists.ensure(owner_conn)
    assert built is not None
    owner_conn.execute(f"COMMENT ON INDEX {vector_lists.INDEX} IS '{comment}'")
    assert vector_lists.current_lists(owner_conn) is None
    with db.read_pipeline(seeded, settings=candidates.scan_settings()) as conn:
        size = candidates.send_size(conn, subject=digests.subject_digest(seeded, "user:large"),
                                    states=["active"]).result()
    assert size.lists_index is None
    again = vector_lists.ensure(owner_conn)
    assert again is not None and again.reason == "new"
    assert vector_lists.current_lists(owner_conn) == again.lists


def test_a_swap_stopped_before_the_rename_is_finished(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None,
) -> None:
    """Stopped between dropping the old index and renaming the new one: the new one, valid,
    is the index; the next run gives it its name and keeps its record, with no build."""
    built = vector_lists.ensure(owner_conn)
    assert built is not None
    owner_conn.execute(f"ALTER INDEX {vector_lists.INDEX} RENAME TO {vector_lists.INDEX}_next")
    assert vector_lists.ensure(owner_conn) is None
    assert _indexes(owner_conn) == {vector_lists.INDEX: (True, [f"lists={built.lists}"])}
    record = vector_lists._recorded(owner_conn)
    assert record is not None and record["versions"] == built.versions


def test_a_build_left_behind_is_dropped_and_done_again(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None,
) -> None:
    """A build that died midway leaves its index under the next name (invalid if it was
    concurrent; without the record of its build in any case); the next run builds from
    scratch, and that index is gone."""
    owner_conn.execute(vector_lists.definition(vector_lists.INDEX + "_next", 2))
    built = vector_lists.ensure(owner_conn)
    assert built is not None and built.reason == "new"
    assert _indexes(owner_conn) == {vector_lists.INDEX: (True, [f"lists={built.lists}"])}


def test_only_one_builder_at_a_time(
    owner_conn: psycopg.Connection[Any], database: dict[str, Any], no_lists_index: None,
    seeded: uuid.UUID, lowered: None,  # noqa: F811
) -> None:
    url = owner_conn.info.dsn
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (vector_lists._LOCK_KEY,))
        assert vector_lists.ensure(owner_conn) is None
        assert _indexes(owner_conn) == {}
        # Released before the next try: a closed connection's backend may still be exiting,
        # holding the lock, when the next statement arrives on a busy machine.
        other.execute("SELECT pg_advisory_unlock(%s)", (vector_lists._LOCK_KEY,))
    assert vector_lists.ensure(owner_conn) is not None


def test_beat_builds_it(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None,
) -> None:
    entry = celery_app.conf.beat_schedule["vector-lists"]
    assert entry["task"] == tasks.build_vector_lists.name
    assert tasks.build_vector_lists.run() == vector_lists.MIN_LISTS
    assert tasks.build_vector_lists.run() is None
    assert vector_lists.current_lists(owner_conn) == vector_lists.MIN_LISTS


def test_a_large_subject_walks_the_lists_index_and_finds_the_exact_nearest(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None,
) -> None:
    """With a lists index, a large subject's list comes from it (not from the HNSW index),
    re-sorted by full-precision distance: here it probes every list, so its top ten are the
    exact top ten; a small subject is still sorted. The memories are dated well before the
    build, so none of them is sorted beside the walk: the walk alone finds them."""
    owner_conn.execute("UPDATE memory SET updated_at = now() - interval '1 hour'"
                       " WHERE tenant_id = %s", (seeded,))
    assert vector_lists.ensure(owner_conn) is not None
    queries = QUERIES[:12]
    overlap = 0.0
    with db.read_pipeline(seeded, settings={**candidates.scan_settings(),
                                            **PRICED_OUT_SORT}) as conn:
        size = candidates.send_size(conn, subject=digests.subject_digest(seeded, "user:large"),
                                    states=["active"]).result()
        assert size.walks() and size.lists_index is not None
        assert size.lists_index.lists == vector_lists.MIN_LISTS
        assert candidates.probes(vector_lists.MIN_LISTS, size.memories) == vector_lists.MIN_LISTS
        for query in queries:
            ask = _ask("user:large", query)
            lists_before, hnsw_before = _scans(conn, vector_lists.INDEX), _scans(conn)
            walked = candidates.send(conn, **ask, size=size).result().vector
            assert _scans(conn, vector_lists.INDEX) == lists_before + 1
            assert _scans(conn) == hnsw_before
            exact = candidates.send(conn, **ask, exact=True).result().vector
            assert walked is not None and exact is not None and len(walked) == 40
            assert [d for _, d in walked] == sorted(d for _, d in walked)
            overlap += len({m for m, _ in walked[:10]} & {m for m, _ in exact[:10]}) / 10
        small = candidates.send_size(conn, subject=digests.subject_digest(seeded, "user:small"),
                                     states=["active"]).result()
        before = _scans(conn, vector_lists.INDEX)
        candidates.send(conn, **_ask("user:small", QUERIES[0]), size=small).result()
        assert _scans(conn, vector_lists.INDEX) == before
    assert overlap / len(queries) == 1.0


def test_recall_through_the_api_walks_the_lists_index(
    client: Any, tenant: dict[str, Any], owner_conn: psycopg.Connection[Any],
    no_lists_index: None, seeded: uuid.UUID, lowered: None,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert vector_lists.ensure(owner_conn) is not None
    sizes: list[candidates.SubjectSize | None] = []
    send = candidates.send
    monkeypatch.setattr(candidates, "send", lambda conn, **ask: sizes.append(ask.get("size"))
                        or send(conn, **ask))
    response = client.post("/v1/recall", headers=tenant["app"], json={
        "subject": "user:large", "query": "what is Alice's blood group?", "mode": "vector"})
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["memory"]["text"] == PLANTED
    # The vector list was sent once, for a subject that walks the lists index (the branch
    # `test_a_large_subject_walks_the_lists_index…` checks by the index's scan count).
    assert len(sizes) == 1 and sizes[0] is not None
    lists_index = sizes[0].lists_index  # with the time from which changes are sorted beside
    assert sizes[0].walks() and lists_index is not None
    assert lists_index.lists == vector_lists.MIN_LISTS


def test_the_command_builds_it_and_says_so(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, seeded: uuid.UUID,  # noqa: F811
    lowered: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.cli import main

    assert main(["vector-lists"]) == 0
    out = capsys.readouterr().out
    assert f"built with {vector_lists.MIN_LISTS} lists" in out and "(there was none)" in out
    assert main(["vector-lists"]) == 0
    assert "suits the table" in capsys.readouterr().out
    _drop_all(owner_conn)
    monkeypatch.setattr(vector_lists, "min_versions", lambda: 10**9)
    assert main(["vector-lists"]) == 0
    assert "no index: fewer than 1,000,000,000 versions" in capsys.readouterr().out


def _axis(dimension: int, *, toward: dict[int, float] | None = None,
          noise: random.Random | None = None) -> list[float]:
    """A unit vector along ``dimension``, leaning ``toward`` others, with a little noise."""
    vector = [noise.gauss(0, 0.01) if noise else 0.0 for _ in range(EMBEDDING_DIMENSIONS)]
    vector[dimension] += 1.0
    for other, weight in (toward or {}).items():
        vector[other] += weight
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector]


def test_memories_changed_since_the_build_are_found_however_far_from_its_centroids(
    owner_conn: psycopg.Connection[Any], no_lists_index: None, tenant: dict[str, Any],
    lowered: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index is built over eight clusters (along the first eight axes). Then memories on a
    new topic arrive (along axis 100, leaning to cluster 0): k-means never saw them, and each
    is filed under cluster 0's list. A question on the new topic that leans away from cluster
    0 probes other lists, so a walk alone finds none of them; recall sorts what changed since
    the build beside the walk, and finds the exact nearest."""
    tenant_id, noise = uuid.UUID(tenant["id"]), random.Random(3)
    bulk.load(owner_conn, tenant_id, [
        (uuid.uuid4(), "user:axes", f"cluster {index % 8}", _axis(index % 8, noise=noise))
        for index in range(2_400)])
    owner_conn.execute("UPDATE memory SET updated_at = now() - interval '1 hour'"
                       " WHERE subject = %s", (digests.subject_digest(tenant_id, "user:axes"),))
    built = vector_lists.ensure(owner_conn)
    assert built is not None and built.lists == vector_lists.MIN_LISTS
    arrived = [uuid.uuid4() for _ in range(20)]
    bulk.load(owner_conn, tenant_id, [
        (memory_id, "user:axes", "a new topic", _axis(100, toward={0: 0.3}, noise=noise))
        for memory_id in arrived])
    monkeypatch.setattr(candidates, "WALK_READS", 1)  # probes: the square root of the lists
    axes = digests.subject_digest(tenant_id, "user:axes")
    ask = {"subject": axes, "states": ["active"], "n": 40, "now": utcnow(),
           "embedding": _axis(100, toward={1: 0.3, 0: -0.3})}

    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        size = candidates.send_size(conn, subject=axes, states=["active"]).result()
        assert size.walks() and size.lists_index is not None
        assert size.lists_index.lists == built.lists
        probes = candidates.probes(built.lists, size.memories)
        assert probes < built.lists
        conn.execute("SELECT set_config('ivfflat.probes', %s, true)", (str(probes),))
        walk_alone = [row[0] for row in conn.execute(candidates._LISTS_WALK_SQL, {
            **ask, "embedding": candidates.vector_literal(ask["embedding"]),
            "since": datetime.now(UTC) + timedelta(days=1)}, prepare=False)]
        assert len(walk_alone) == 40 and not set(walk_alone) & set(arrived)

        lists_before = _scans(conn, vector_lists.INDEX)
        walked = candidates.send(conn, **ask, size=size).result().vector
        assert _scans(conn, vector_lists.INDEX) == lists_before + 1
        exact = candidates.send(conn, **ask, exact=True).result().vector
    assert walked is not None and exact is not None
    assert walked == exact
    assert {memory_id for memory_id, _ in walked[:20]} == set(arrived)
