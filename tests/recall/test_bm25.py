"""Recall's keyword list is BM25 over the subject's live memories, in process and in SQL.

A reference BM25 written here (k1 1.2, b 0.75; terms are PostgreSQL's english lexemes, the
one tokenizer of keyword search, asked of the database text by text) ranks the dialogue
fixture's turns for each of its questions; both of recall's ways must give its top ten. The
term statistics the SQL way reads are kept by triggers: after every kind of change they
equal the statistics counted afresh, and a forgotten memory's words leave no row behind.
"""

from __future__ import annotations

import json
import math
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import psycopg
import pytest

from app.core import db
from app.keys import digests
from app.recall import bm25_lists, candidates, small_subjects
from tests.recall import bulk

FIXTURE = Path(__file__).parent / "fixtures" / "dialogues.json"
K1, B = 1.2, 0.75


@cache
def _dialogues() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Per dialogue, its turns' texts and its questions."""
    data = json.loads(FIXTURE.read_text())
    turns = {d["id"]: [f"{t['speaker']}: {t['text']}" for s in d["sessions"] for t in s["turns"]]
             for d in data["dialogues"]}
    questions = {d["id"]: [q["question"] for q in d["questions"]] for d in data["dialogues"]}
    return turns, questions


def _lexemes(conn: psycopg.Connection[Any], text: str) -> dict[str, int]:
    """PostgreSQL's english lexemes of ``text`` and how often each occurs."""
    return {lexeme: len(positions) for lexeme, positions in conn.execute(
        "SELECT lexeme, positions FROM unnest(to_tsvector('english', %s))", (text,))}


def _reference(documents: dict[uuid.UUID, dict[str, int]], query: dict[str, int],
               ) -> dict[uuid.UUID, float]:
    """Okapi BM25 of every document holding a query term: idf = ln(1 + (N − df + ½)/(df + ½)),
    each distinct query term once."""
    total = len(documents)
    average = sum(sum(terms.values()) for terms in documents.values()) / total
    scores: dict[uuid.UUID, float] = {}
    for term in query:
        holding = [memory for memory, terms in documents.items() if term in terms]
        weight = math.log(1 + (total - len(holding) + 0.5) / (len(holding) + 0.5))
        for memory in holding:
            tf, length = documents[memory][term], sum(documents[memory].values())
            scores[memory] = scores.get(memory, 0.0) + weight * tf * (K1 + 1) / (
                tf + K1 * (1 - B + B * length / average))
    return scores


def _same_top_ten(found: list[tuple[uuid.UUID, float]], reference: dict[uuid.UUID, float],
                  where: str) -> None:
    """The reference's top ten, to the score; memories whose scores tie may swap places."""
    best = sorted(reference.values(), reverse=True)[:10]
    assert [score for _, score in found[:10]] == pytest.approx(best, rel=1e-9), where
    for memory, score in found[:10]:
        assert reference[memory] == pytest.approx(score, rel=1e-9), where


@pytest.fixture
def seeded(client: Any, database: dict[str, Any]) -> tuple[uuid.UUID, dict[str, Any]]:
    """Each dialogue in a subject of its own (ranked in process) and all of them in one
    subject of 524 (ranked by the database), loaded in bulk; a few turns then forgotten or
    deprecated, so the statistics are over live memories only."""
    from tests.conftest import make_tenant

    tenant_id = uuid.UUID(make_tenant(client, "BM25")["id"])
    turns, _ = _dialogues()
    rows = [(uuid.uuid4(), subject, text) for subject, texts in turns.items() for text in texts]
    rows += [(uuid.uuid4(), "all", text) for texts in turns.values() for text in texts]
    url = database["url"].replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as conn:
        bulk.load(conn, tenant_id, [(*row, None) for row in rows])
        gone = [row[0] for row in rows[::37]]
        conn.execute("UPDATE memory SET state = 'deprecated' WHERE id = ANY(%s)", (gone,))
        conn.commit()
        texts: dict[uuid.UUID, dict[str, Any]] = {}
        for memory_id, subject, text in rows:
            if memory_id not in gone:
                texts[memory_id] = {"subject": subject, "terms": _lexemes(conn, text)}
    return tenant_id, texts


def test_keyword_lists_are_the_reference_bm25_in_process_and_in_sql(
    seeded: tuple[uuid.UUID, dict[str, Any]], owner_conn: psycopg.Connection[Any]
) -> None:
    tenant_id, texts = seeded
    turns, questions = _dialogues()
    compared = 0
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        for subject in [*turns, "all"]:
            documents = {m: t["terms"] for m, t in texts.items() if t["subject"] == subject}
            asked = (questions[subject] if subject != "all"
                     else [q for qs in questions.values() for q in qs])
            for question in asked:
                reference = _reference(documents, _lexemes(owner_conn, question))
                if not reference:
                    continue
                terms = bulk.terms(conn, tenant_id, subject, question)
                stored = digests.subject_digest(tenant_id, subject)
                sql = bm25_lists.send(conn, subject=stored, states=["active"], n=40,
                                      terms=terms).result().keyword
                assert sql is not None
                _same_top_ten(sql, reference, f"SQL {subject}: {question}")
                rows = small_subjects.send(conn, subject=stored, states=["active"],
                                           terms=terms).result()
                if subject == "all":
                    assert rows is None  # past RANK_IN_PROCESS_UP_TO: the database ranks it
                else:
                    assert rows is not None
                    _same_top_ten(rows.keyword(40), reference, f"here {subject}: {question}")
                    assert [m for m, _ in rows.keyword(40)] == [m for m, _ in sql], question
                compared += 1
    assert compared > 400


def test_statistics_follow_every_change_and_forgetting_leaves_no_term(
    client: Any, tenant: dict[str, Any], owner_conn: psycopg.Connection[Any]
) -> None:
    """Writes, a correction, a revert, a supersession, a forget by description and a forget:
    after each, the kept statistics are those counted afresh from the live memories; the
    forgotten memory's own words are in no row."""
    headers = tenant["app"]

    def remember(text: str, **extra: Any) -> dict[str, Any]:
        response = client.post("/v1/memories", json={"subject": "user:1", "text": text,
                                                      **extra}, headers=headers)
        assert response.status_code in (200, 201), response.text
        body: dict[str, Any] = response.json()
        return body

    def check() -> None:
        kept = owner_conn.execute(
            "SELECT term, memories FROM subject_term WHERE tenant_id = %s ORDER BY term",
            (tenant["id"],)).fetchall()
        fresh = owner_conn.execute(
            "SELECT lexeme, count(*) FROM memory m JOIN memory_version v"
            " ON v.id = m.current_version_id, unnest(tsvector_to_array(v.search)) lexeme"
            " WHERE m.tenant_id = %s AND m.state IN ('active', 'suspect')"
            " GROUP BY lexeme ORDER BY lexeme", (tenant["id"],)).fetchall()
        assert kept == fresh
        totals = owner_conn.execute(
            "SELECT memories, length FROM subject_text WHERE tenant_id = %s",
            (tenant["id"],)).fetchall()
        counted = owner_conn.execute(
            "SELECT count(*), sum(lethe_text_length(v.search)) FROM memory m"
            " JOIN memory_version v ON v.id = m.current_version_id"
            " WHERE m.tenant_id = %s AND m.state IN ('active', 'suspect')",
            (tenant["id"],)).fetchone()
        assert totals == ([] if counted[0] == 0 else [counted])

    secret = remember("My locker code at the Zanzibar gym is quokka-7731.")
    kept = remember("I renewed the gym membership in May; the gym is in Zanzibar.")
    check()
    etag = client.get(f"/v1/memories/{secret['id']}", headers=headers).headers["ETag"]
    response = client.patch(f"/v1/memories/{secret['id']}", json={
        "text": "My locker code at the Zanzibar gym is wombat-1182 since March."},
        headers={**headers, "If-Match": etag})
    assert response.status_code == 200, response.text
    check()
    response = client.post(f"/v1/memories/{secret['id']}/revert", json={"seq": 1},
                           headers={**headers, "If-Match": response.headers["ETag"]})
    assert response.status_code == 200, response.text
    check()
    remember("The gym moved my locker; I have a new one near the sauna.",
             supersedes=[kept["id"]])
    check()
    hobby = remember("I collect vintage kaleidoscopes. I also swim at the gym on Fridays.")
    response = client.post("/v1/forget", json={"subject": "user:1",
                                               "about": "that I collect kaleidoscopes"},
                           headers=headers)
    assert response.status_code == 200, response.text
    check()
    assert client.get(f"/v1/memories/{hobby['id']}", headers=headers).status_code in (200, 404)
    response = client.post(f"/v1/memories/{secret['id']}/forget", json={}, headers=headers)
    assert response.status_code == 200, response.text
    check()
    words = {row[0] for row in owner_conn.execute(
        "SELECT term FROM subject_term WHERE tenant_id = %s", (tenant["id"],))}
    assert words, "the other memories' terms are still counted"
    for own in ("quokka", "7731", "wombat", "1182", "kaleidoscop", "vintag", "collect"):
        assert not any(own in word for word in words), own
    # Once nothing is live, no statistics row is left at all.
    for memory in client.get("/v1/memories?subject=user:1", headers=headers).json()["data"]:
        client.post(f"/v1/memories/{memory['id']}/forget", json={}, headers=headers)
    check()
    for table in ("subject_term", "subject_text"):
        assert owner_conn.execute(f"SELECT count(*) FROM {table} WHERE tenant_id = %s",
                                  (tenant["id"],)).fetchone() == (0,)


def test_observed_at_defaults_to_the_write_time_and_is_returned_by_recall(
    client: Any, tenant: dict[str, Any]
) -> None:
    headers = tenant["app"]
    said = client.post("/v1/memories", json={
        "subject": "user:1", "text": "We adopted a greyhound called Biscuit.",
        "observed_at": "2026-01-11T19:05:00+00:00"}, headers=headers)
    assert said.status_code == 201, said.text
    assert said.json()["observed_at"].startswith("2026-01-11T19:05:00")
    now = client.post("/v1/memories", json={"subject": "user:1", "text": "Biscuit hates stairs."},
                      headers=headers).json()
    assert now["observed_at"] == now["created_at"]
    found = client.post("/v1/recall", json={"subject": "user:1",
                                            "query": "when did we get the dog"},
                        headers=headers).json()["results"]
    shown = {r["memory"]["id"]: r["memory"]["observed_at"] for r in found}
    assert shown[said.json()["id"]].startswith("2026-01-11T19:05:00")
    naive = client.post("/v1/memories", json={"subject": "user:1", "text": "x y z",
                                              "observed_at": "2026-01-11T19:05:00"},
                        headers=headers)
    assert naive.status_code == 422, naive.text
