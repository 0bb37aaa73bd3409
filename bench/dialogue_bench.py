"""Conversational retrieval: recall over multi-session dialogues, one memory per turn.

    .venv/bin/python bench/dialogue_bench.py [--one-subject] [--tune] [--embedding-variants]

Stores every turn of `tests/recall/fixtures/dialogues.json` (three dialogues, 524 turns) with
`POST /v1/memories` on a live `lethe api` (text "Speaker: words", `observed_at` the turn's
time), one subject per dialogue (about 175 memories each, ranked in process), or with
`--one-subject` all under one subject (524, ranked by the database). Then asks each question
with `POST /v1/recall` in `vector`, `keyword` and `hybrid` mode and prints hit@10 (an evidence
turn among the first ten) and hit@1 per half (tuning, reporting).

`--tune` reads recall's two candidate lists for every question the way recall does and prints
hit@10 of the fusions tried on the tuning half, beside the reporting half's.
`--embedding-variants` compares exact cosine hit@10 when each turn is embedded alone, after
its session's date, or after the turn before it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import numpy as np

from bench.common import create_tenant, live_api, use_data_dir

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "recall" / "fixtures" / "dialogues.json"
HALVES = ("tuning", "reporting")
MODES = ("vector", "keyword", "hybrid")
# Turns of a session are about a minute apart.
TURN_GAP = timedelta(minutes=1)


@dataclass(frozen=True)
class Turn:
    id: str
    subject: str
    text: str
    observed_at: datetime
    session_date: str
    previous: str | None


@dataclass(frozen=True)
class Question:
    id: str
    subject: str
    text: str
    evidence: frozenset[str]
    half: str
    category: str


def load(one_subject: bool) -> tuple[list[Turn], list[Question]]:
    data = json.loads(FIXTURE.read_text())
    turns: list[Turn] = []
    questions: list[Question] = []
    for dialogue in data["dialogues"]:
        subject = "dialogues" if one_subject else dialogue["id"]
        for session in dialogue["sessions"]:
            start = datetime.fromisoformat(session["date"].replace("Z", "+00:00"))
            previous = None
            for index, turn in enumerate(session["turns"]):
                text = f"{turn['speaker']}: {turn['text']}"
                turns.append(Turn(id=turn["id"], subject=subject, text=text,
                                  observed_at=start + index * TURN_GAP,
                                  session_date=start.strftime("%-d %B %Y"), previous=previous))
                previous = text
        questions += [Question(id=q["id"], subject=subject, text=q["question"],
                               evidence=frozenset(q["evidence"]), half=q["half"],
                               category=q["category"]) for q in dialogue["questions"]]
    return turns, questions


def store(client: httpx.Client, turns: Sequence[Turn]) -> dict[str, str]:
    """Each turn as a memory through the API; memory ID → turn ID."""
    turn_of: dict[str, str] = {}
    for turn in turns:
        response = client.post("/v1/memories", json={
            "subject": turn.subject, "text": turn.text, "source": f"dialogue:{turn.subject}",
            "observed_at": turn.observed_at.isoformat()})
        assert response.status_code in (200, 201), response.text
        turn_of[response.json()["id"]] = turn.id
    return turn_of


def hits(found: Sequence[Sequence[str]], questions: Sequence[Question], k: int) -> float:
    """Share of questions with an evidence turn among the first ``k`` found."""
    return sum(bool(set(got[:k]) & q.evidence) for got, q in zip(found, questions,
                                                                   strict=True)) / len(questions)


def by_half(found: Sequence[Sequence[str]], questions: Sequence[Question],
            k: int) -> dict[str, float]:
    return {half: hits([f for f, q in zip(found, questions, strict=True) if q.half == half],
                       [q for q in questions if q.half == half], k) for half in HALVES}


def recall_modes(client: httpx.Client, questions: Sequence[Question],
                 turn_of: dict[str, str]) -> dict[str, list[list[str]]]:
    found: dict[str, list[list[str]]] = {}
    for mode in MODES:
        found[mode] = []
        for question in questions:
            response = client.post("/v1/recall", json={
                "subject": question.subject, "query": question.text, "limit": 10, "mode": mode})
            assert response.status_code == 200, response.text
            results = response.json()["results"]
            assert all("observed_at" in r["memory"] for r in results)
            found[mode].append([turn_of[r["memory"]["id"]] for r in results])
    return found


def candidate_lists(tenant_id: uuid.UUID, questions: Sequence[Question],
                    turn_of: dict[str, str]) -> list[Any]:
    """Recall's two candidate lists per question, read as recall reads them."""
    from app.embeddings.runtime import embedder
    from app.recall import service
    from app.recall.schemas import RecallRequest

    model = embedder()
    lists = []
    for question in questions:
        request = RecallRequest(subject=question.subject, query=question.text)
        found = service.candidate_lists(tenant_id, request, model.embed_one(question.text))
        lists.append(found)
    return lists


def score_fusion(
    vector: Sequence[tuple[uuid.UUID, float]], keyword: Sequence[tuple[uuid.UUID, float]], *,
    keyword_share: float,
) -> list[tuple[uuid.UUID, float]]:
    """Items by a weighted sum of their scores, each list's rescaled to [0, 1]: cosine
    similarity (1 − distance) from the list's lowest to its highest, BM25 divided by the
    list's highest; an item one list lacks has 0 there. Ties keep first-seen order."""
    scores: dict[uuid.UUID, float] = {}
    if vector:
        similarity = [1.0 - distance for _, distance in vector]
        low, high = min(similarity), max(similarity)
        for (item, _), value in zip(vector, similarity, strict=True):
            scaled = (value - low) / (high - low) if high > low else 1.0
            scores[item] = (1 - keyword_share) * scaled
    if keyword:
        top = max(score for _, score in keyword)
        for item, score in keyword:
            scaled = score / top if top > 0 else 0.0
            scores[item] = scores.get(item, 0.0) + keyword_share * scaled
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)


def _rrf(found: Any, *, k: int, weight: float,
         gate: float | None = None) -> list[tuple[uuid.UUID, float]]:
    from app.recall import ranking

    vector, keyword = found.ranked()
    if gate is not None:
        keyword = ranking.gated(found.keyword, gate)
    return ranking.weighted_rrf([vector, keyword], weights=[1.0, weight], k=k)


def _scores(found: Any, *, share: float) -> list[tuple[uuid.UUID, float]]:
    return score_fusion(found.vector or [], found.keyword or [], keyword_share=share)


def tune(lists: Sequence[Any], questions: Sequence[Question], turn_of: dict[str, str]) -> None:
    from app.recall import ranking

    def ranked(fuse: Callable[[Any], list[tuple[uuid.UUID, float]]]) -> list[list[str]]:
        return [[turn_of[str(memory_id)] for memory_id, _ in fuse(found)[:10]]
                for found in lists]

    tried: list[tuple[str, dict[str, float], dict[str, float]]] = []

    def trial(name: str, fuse: Callable[[Any], list[tuple[uuid.UUID, float]]]) -> None:
        found = ranked(fuse)
        tried.append((name, by_half(found, questions, 10), by_half(found, questions, 1)))

    trial("recall's fusion", lambda found: ranking.fuse(found.vector, found.keyword))
    for k in (3, 5, 10, 30, 60):
        for weight in (0.3, 0.5, 0.8, 1.0):
            trial(f"rrf k={k} keyword x{weight}", partial(_rrf, k=k, weight=weight))
            for gate in (0.2, 0.3, 0.4, 0.5, 0.6):
                trial(f"rrf k={k} keyword x{weight} ≥{gate} best",
                      partial(_rrf, k=k, weight=weight, gate=gate))
    for share in (0.2, 0.3, 0.4, 0.5, 0.6):
        trial(f"scores keyword share {share}", partial(_scores, share=share))
    # Chosen by the tuning half: hit@10, then hit@1.
    tried.sort(key=lambda item: (-item[1]["tuning"], -item[2]["tuning"]))
    print("\nfusion                          hit@10 tuning  reporting   hit@1 tuning  reporting")
    for name, at10, at1 in [tried[0], *[t for t in tried[1:] if t[0] == "recall's fusion"],
                            *tried[1:12]]:
        print(f"{name:30s}  {at10['tuning']:.3f}         {at10['reporting']:.3f}       "
              f"{at1['tuning']:.3f}         {at1['reporting']:.3f}")


def embedding_variants(turns: Sequence[Turn], questions: Sequence[Question]) -> None:
    """Exact cosine hit@10 when a turn is embedded alone, after its session date, or after the
    turn before it."""
    from app.embeddings.runtime import embedder

    model = embedder()
    queries = np.asarray(model.embed([q.text for q in questions]))
    variants = {
        "turn alone": [t.text for t in turns],
        "session date + turn": [f"{t.session_date}. {t.text}" for t in turns],
        "previous turn + turn": [f"{t.previous}\n{t.text}" if t.previous else t.text
                                 for t in turns],
    }
    print("\nembedded text (exact cosine)   tuning  reporting")
    for name, texts in variants.items():
        matrix = np.asarray(model.embed(texts))
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        found = []
        for index, question in enumerate(questions):
            own = [i for i, t in enumerate(turns) if t.subject == question.subject]
            scores = matrix[own] @ (queries[index] / np.linalg.norm(queries[index]))
            best = np.argsort(-scores, kind="stable")[:10]
            found.append([turns[own[i]].id for i in best])
        figures = by_half(found, questions, 10)
        print(f"{name:30s}  {figures['tuning']:.3f}   {figures['reporting']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--one-subject", action="store_true",
                        help="all dialogues under one subject (ranked by the database)")
    parser.add_argument("--tune", action="store_true", help="print the fusions tried")
    parser.add_argument("--embedding-variants", action="store_true")
    parser.add_argument("--save-lists", type=Path, default=None,
                        help="with --tune: keep the candidate lists in this file")
    args = parser.parse_args()

    turns, questions = load(args.one_subject)
    print(f"{len(turns)} turns, {len(questions)} questions "
          f"({sum(q.half == 'tuning' for q in questions)} tuning), "
          f"{len({t.subject for t in turns})} subject(s)", flush=True)
    use_data_dir(Path(tempfile.mkdtemp(prefix="lethe-dialogue-bench-")))
    from app.core import migrations
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    tenant_id, key = create_tenant("Dialogue bench")
    with live_api(runtime) as base, httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
        turn_of = store(client, turns)
        found = recall_modes(client, questions, turn_of)
    print("\nmode      hit@10 tuning  reporting   hit@1 tuning  reporting")
    for mode in MODES:
        at10, at1 = by_half(found[mode], questions, 10), by_half(found[mode], questions, 1)
        print(f"{mode:8s}  {at10['tuning']:.3f}         {at10['reporting']:.3f}       "
              f"{at1['tuning']:.3f}         {at1['reporting']:.3f}")
    if args.tune:
        lists = candidate_lists(tenant_id, questions, turn_of)
        if args.save_lists:
            import pickle

            args.save_lists.write_bytes(pickle.dumps((lists, questions, turn_of)))
        tune(lists, questions, turn_of)
    if args.embedding_variants:
        embedding_variants(turns, questions)


if __name__ == "__main__":
    main()
