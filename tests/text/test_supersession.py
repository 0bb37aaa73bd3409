"""The supersession rule on the labelled fixture, with the real MiniLM embeddings.

The fixture (tests/text/fixtures/contradictions.json) holds realistic updates, restatements
and unrelated-but-similar pairs; the rule must find contradictions with precision ≥ 0.9 and
recall ≥ 0.7 under the default thresholds, and never call a restatement one.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from app.text.supersession import DEFAULT, Relation, classify

FIXTURE = Path(__file__).parent / "fixtures" / "contradictions.json"
LABELS = [relation.value for relation in Relation]


@pytest.fixture(scope="module")
def judged() -> list[tuple[dict[str, str], Relation]]:
    from app.embeddings.local import LocalMiniLMEmbedder

    pairs = json.loads(FIXTURE.read_text())["pairs"]
    model = LocalMiniLMEmbedder(batch_size=32)
    olds = model.embed([p["old"] for p in pairs])
    news = model.embed([p["new"] for p in pairs])
    return [(pair, classify(pair["new"], new, pair["old"], old, DEFAULT).relation)
            for pair, old, new in zip(pairs, olds, news, strict=True)]


def _confusion(judged: list[tuple[dict[str, str], Relation]]) -> Counter[tuple[str, str]]:
    return Counter((pair["label"], relation.value) for pair, relation in judged)


def test_fixture_is_large_varied_and_balanced() -> None:
    pairs = json.loads(FIXTURE.read_text())["pairs"]
    counts = Counter(p["label"] for p in pairs)
    assert len(pairs) >= 60 and set(counts) == set(LABELS)
    assert all(len(pairs) / 4 <= n <= len(pairs) / 2 for n in counts.values())
    assert len({(p["old"], p["new"]) for p in pairs}) == len(pairs)


def test_contradictions_are_found_with_precision_and_recall(
    judged: list[tuple[dict[str, str], Relation]],
) -> None:
    confusion = _confusion(judged)
    found = sum(confusion[(label, "contradiction")] for label in LABELS)
    right = confusion[("contradiction", "contradiction")]
    expected = sum(confusion[("contradiction", label)] for label in LABELS)
    matrix = {label: [confusion[(label, got)] for got in LABELS] for label in LABELS}
    assert found and right / found >= 0.9, matrix
    assert right / expected >= 0.7, matrix


def test_no_restatement_or_unrelated_pair_is_called_a_contradiction(
    judged: list[tuple[dict[str, str], Relation]],
) -> None:
    wrongly = [(p["old"], p["new"]) for p, relation in judged
               if relation is Relation.contradiction and p["label"] != "contradiction"]
    assert wrongly == []


def test_restatements_are_recognised(judged: list[tuple[dict[str, str], Relation]]) -> None:
    confusion = _confusion(judged)
    total = sum(confusion[("restatement", label)] for label in LABELS)
    assert confusion[("restatement", "restatement")] / total >= 0.8
