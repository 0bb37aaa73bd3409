"""A small subject is read whole while its query embeds and both lists are ranked here: they
must be the database's lists, to the order, for every subject and query.

The retrieval fixture's 75 facts are filed under each of its six subjects (as in
test_quality.py), beside texts with codes, addresses, versions and hyphens, so that some
terms are specific, some common enough to be stop words (in more than 5 % of a subject), and
some lexemes are the parser's trickier kinds.
"""

from __future__ import annotations

import json
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from app.core import db
from app.embeddings.runtime import embedder
from app.keys import digests
from app.recall import bm25_lists, candidates, small_subjects
from app.text import bm25
from tests.recall import bulk

FIXTURE = Path(__file__).parent / "fixtures" / "retrieval.json"
TRICKY = [
    "Order ZX-400 shipped; tracking code 1Z999AA10123456784 via UPS.",
    "Email me at alice.smith@example.com or see https://example.com/docs/v2.",
    "Upgraded the firmware to v4.1.2 on 2024-03-05; the co-founder approved it.",
    "Doesn't eat gluten-free pasta; prefers café au lait at 7:30am.",
    "Ticket #4471 about the ZX-400 gym locker is still open.",
]
EXTRA_QUERIES = [
    "ZX-400 tracking", "alice.smith@example.com", "firmware v4.1.2", "co-founder approval",
    "gluten-free café", "ticket 4471", "https://example.com/docs/v2", "2024-03-05",
    "", "the and of", "what does she do for work and where does she live?",
]


@cache
def _data() -> tuple[list[str], list[str], list[str], dict[str, list[float]]]:
    """(subjects, texts each subject holds, queries, text → vector)."""
    data = json.loads(FIXTURE.read_text())
    subjects = sorted({memory["subject"] for memory in data["memories"]})
    texts = [memory["text"] for memory in data["memories"]] + TRICKY
    queries = [query["query"] for query in data["queries"]] + EXTRA_QUERIES
    unique = sorted(set(texts))
    return subjects, texts, queries, dict(zip(unique, embedder().embed(unique), strict=True))


@pytest.fixture
def seeded(client: Any, database: dict[str, Any]) -> uuid.UUID:
    """Every subject holds every text (one without a vector), loaded in bulk."""
    from tests.conftest import make_tenant

    tenant_id = uuid.UUID(make_tenant(client, "Small subjects")["id"])
    subjects, texts, _, vectors = _data()
    url = database["url"].replace("postgresql+psycopg://", "postgresql://")
    rows = [(uuid.uuid4(), subject, text_) for subject in subjects for text_ in texts]
    with psycopg.connect(url) as conn:
        bulk.load(conn, tenant_id, [(memory_id, subject, text_, None if index == 3 else
                                     vectors[text_])
                                    for index, (memory_id, subject, text_) in enumerate(rows)])
    return tenant_id


def test_both_lists_ranked_here_are_the_databases(seeded: uuid.UUID) -> None:
    subjects, texts, queries, _ = _data()
    model = embedder()
    query_vectors = dict(zip(queries, model.embed([q or "-" for q in queries]), strict=True))
    compared = common = with_keywords = 0
    with db.read_pipeline(seeded, settings=candidates.scan_settings()) as conn:
        for subject in subjects:
            for query in queries:
                terms = bulk.terms(conn, seeded, subject, query)
                stored = digests.subject_digest(seeded, subject)
                rows = small_subjects.send(conn, subject=stored, states=["active"],
                                           terms=terms).result()
                assert rows is not None and len(rows.ids) == len(texts)
                ask = {"subject": stored, "states": ["active"], "n": 40}
                keyword = bm25_lists.send(conn, **ask, terms=terms).result().keyword
                here = rows.keyword(40)
                assert keyword is not None
                assert [m for m, _ in here] == [m for m, _ in keyword], (subject, query)
                assert [c for _, c in here] == pytest.approx([c for _, c in keyword], rel=1e-9)
                exact = candidates.send(conn, **ask, embedding=query_vectors[query],
                                        exact=True).result().vector
                assert exact is not None
                nearest = rows.nearest(query_vectors[query], 40)
                assert [m for m, _ in nearest] == [m for m, _ in exact], (subject, query)
                assert [d for _, d in nearest] == pytest.approx([d for _, d in exact], abs=1e-6)
                compared += 1
                with_keywords += bool(keyword)
                common += any(sum(term in d.frequencies for d in rows.documents) > 4
                              for term in rows.terms)
    # The comparison covered what it is for: lists with keyword hits, and queries with terms
    # in more than 5 % of the subject (the old keyword list's stop words; BM25 weighs them).
    assert compared == len(subjects) * len(queries)
    assert with_keywords > 50 and common > 50


def test_a_memory_without_a_vector_is_a_keyword_candidate_only(seeded: uuid.UUID) -> None:
    subjects, texts, _, _ = _data()
    with db.read_pipeline(seeded) as conn:
        rows = small_subjects.send(conn, subject=digests.subject_digest(seeded, subjects[0]),
                states=["active"],
                                   terms=bulk.terms(conn, seeded, subjects[0], texts[3])).result()
    assert rows is not None
    (missing,) = set(rows.ids) - set(rows.vector_ids)
    assert len(rows.vector_ids) == len(rows.ids) - 1 == rows.matrix.shape[0]
    # Held at the vectors' stored precision while the query embeds, not widened (a recall in
    # flight holds its subject's vectors: twice the memory per request).
    assert rows.matrix.dtype == np.float32
    assert missing in {m for m, _ in rows.keyword(40)}
    assert missing not in {m for m, _ in rows.nearest([1.0] * 384, 1000)}


def test_only_a_subject_up_to_the_limit_is_read_whole(
    seeded: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    subjects, texts, _, _ = _data()
    for limit, whole in ((len(texts), True), (len(texts) - 1, False)):
        monkeypatch.setattr(small_subjects, "RANK_IN_PROCESS_UP_TO", limit)
        with db.read_pipeline(seeded) as conn:
            rows = small_subjects.send(conn, subject=digests.subject_digest(seeded, subjects[0]),
                    states=["active"],
                                       terms=[]).result()
        assert (rows is not None) is whole
    with db.read_pipeline(seeded) as conn:
        assert small_subjects.send(conn, subject=digests.subject_digest(seeded, "user:nobody"),
                states=["active"],
                                   terms=[]).result() is None


def _rows(ids: list[uuid.UUID], matrix: list[list[float]],
          held: list[dict[str, int]] | None = None, terms: set[str] | None = None,
          lengths: list[int] | None = None) -> small_subjects.SubjectRows:
    held = held or [{} for _ in ids]
    return small_subjects.SubjectRows(
        ids=ids, documents=[bm25.Document(length=(lengths or [10] * len(ids))[i],
                                          frequencies=frequencies)
                            for i, frequencies in enumerate(held)],
        eligible=[True] * len(ids), terms=frozenset(terms or set()), vector_ids=ids,
        matrix=np.array(matrix, dtype=np.float32))


def test_ranking_here_breaks_ties_by_id_and_puts_a_zero_vector_last() -> None:
    """As PostgreSQL orders `distance, id`, with NaN (pgvector's cosine distance of a zero
    vector) after every number."""
    ids = sorted(uuid.uuid4() for _ in range(4))
    rows = _rows([ids[3], ids[2], ids[1], ids[0]],
                 [[0.0, 0.0], [0.0, 1.0], [2.0, 0.0], [1.0, 0.0]])
    assert [memory_id for memory_id, _ in rows.nearest([1.0, 0.0], 4)] == [
        ids[0], ids[1], ids[2], ids[3]]
    assert rows.nearest([1.0, 0.0], 2) == [(ids[0], 0.0), (ids[1], 0.0)]
    assert _rows([], []).nearest([1.0], 3) == []


def test_keyword_scores_here_are_bm25_weigh_rare_terms_and_tie_by_id() -> None:
    """60 memories of 10 terms: "zx" in two, "gym" in three, "locker" in none, "code" in 30
    (common, so it weighs little, but it still counts). Query terms: all four."""
    ids = sorted(uuid.uuid4() for _ in range(60))
    held: list[dict[str, int]] = [{} for _ in ids]
    for index in range(30):
        held[index]["code"] = 1
    held[5] |= {"zx": 1, "gym": 1}
    held[1] |= {"zx": 1, "gym": 1}
    held[7] |= {"gym": 2}
    rows = _rows(ids, [[1.0]] * 60, held, {"zx", "gym", "locker", "code"})
    ranked = rows.keyword(10)
    idf = {df: np.log(1 + (60 - df + 0.5) / (df + 0.5)) for df in (2, 3, 30)}
    # At the average length a term held once scores its idf; twice, 2.2/1.2 of it.
    assert [m for m, _ in ranked[:3]] == [ids[1], ids[5], ids[7]]
    assert ranked[0][1] == pytest.approx(idf[2] + idf[3] + idf[30])
    assert ranked[2][1] == pytest.approx(idf[3] * 2 * 2.2 / 3.2 + idf[30])
    assert [m for m, _ in ranked[3:]] == sorted(ids[i] for i in range(30)
                                                if i not in (1, 5, 7))[:7]
    assert _rows([], [], [], {"zx"}).keyword(5) == []
