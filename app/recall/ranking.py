"""Reciprocal rank fusion: combine ranked candidate lists without comparing their scores.

Cosine distances and full-text ranks live on different scales; RRF uses only positions, so
neither list needs calibrating against the other.

Two memories often tie: one list ranks A first and B second, the other B first and A second.
At equal scores an active memory is listed before a suspect one (a correction above the fact it
contradicted); the memories' states are known only once they are loaded, so the results are
loaded a whole tie at a time and then ordered.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

from app.memories.models import MemoryState
from app.recall.schemas import RecallResult

K = TypeVar("K", bound=Hashable)

RRF_K = 60
# Scores are shown to six places; two that show the same are equal relevance.
SCORE_DIGITS = 6


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[K]], *, k: int = RRF_K
) -> list[tuple[K, float]]:
    """Items by descending Σ 1/(k + rank); ties keep first-seen order (stable)."""
    scores: dict[K, float] = {}
    for ranked in ranked_lists:
        for position, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + position)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)


def weighted_rrf(
    ranked_lists: Sequence[Sequence[K]], *, weights: Sequence[float], k: int = RRF_K
) -> list[tuple[K, float]]:
    """Items by descending Σ weight/(k + rank), each list with its weight; ties keep
    first-seen order (stable)."""
    return _fused([[(item, position) for position, item in enumerate(ranked, start=1)]
                   for ranked in ranked_lists], weights, k)


def _fused(ranked_lists: Sequence[Sequence[tuple[K, int]]], weights: Sequence[float],
           k: int) -> list[tuple[K, float]]:
    scores: dict[K, float] = {}
    for ranked, weight in zip(ranked_lists, weights, strict=True):
        for item, position in ranked:
            scores[item] = scores.get(item, 0.0) + weight / (k + position)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)


def shared_ranks(found: Sequence[tuple[K, float]]) -> list[tuple[K, int]]:
    """Each item with its rank in a scored list, best first; items of equal score share the
    rank of the first of them: equally relevant, they are not made less so by their IDs."""
    ranked: list[tuple[K, int]] = []
    for position, (item, score) in enumerate(found, start=1):
        tied = ranked and found[position - 2][1] == score
        ranked.append((item, ranked[-1][1] if tied else position))
    return ranked


# Recall's fusion, chosen on the tuning half of the dialogue benchmark (docs/benchmarks.md,
# "Conversational retrieval"): reciprocal rank with a small constant, so first places count
# for much more than tenth ones; the keyword list at under a third of the vector list's weight,
# and only its memories scoring at least `KEYWORD_GATE` of its best one. A memory matched by
# a common word alone (a speaker's name, "gym") would otherwise join with a rank as good as a
# real match's.
FUSION_K = 5
KEYWORD_WEIGHT = 0.3
KEYWORD_GATE = 0.6


def fuse(
    vector: Sequence[tuple[K, float]] | None, keyword: Sequence[tuple[K, float]] | None,
) -> list[tuple[K, float]]:
    """Recall's fusion of its candidate lists, best first: each as (item, its list's score),
    items of equal score sharing a rank. A single list (one mode) is ranked as it is."""
    if vector is None or keyword is None:
        alone = vector if vector is not None else keyword or []
        return _fused([shared_ranks(alone)], [1.0], FUSION_K)
    best = max((score for _, score in keyword), default=0.0)
    kept = [(item, score) for item, score in keyword if score >= KEYWORD_GATE * best]
    return _fused([shared_ranks(vector), shared_ranks(kept)], [1.0, KEYWORD_WEIGHT],
                  FUSION_K)


def gated(found: Sequence[tuple[K, float]], share: float) -> list[K]:
    """The items scoring at least ``share`` of the best score, in order."""
    best = max((score for _, score in found), default=0.0)
    return [item for item, score in found if score >= share * best]


def shown(score: float) -> float:
    """The score as a result shows it, and as ties are judged."""
    return round(score, SCORE_DIGITS)


def tie_end(fused: Sequence[tuple[K, float]], end: int) -> int:
    """``end`` moved past every item tied with the one before it, so a slice that stops there
    never splits a tie."""
    end = min(end, len(fused))
    while 0 < end < len(fused) and shown(fused[end][1]) == shown(fused[end - 1][1]):
        end += 1
    return end


def order(results: Sequence[RecallResult]) -> list[RecallResult]:
    """By score, and at equal score active before suspect; otherwise in fused order."""
    return sorted(results, key=lambda result: (
        -result.score, result.memory.state is not MemoryState.active))
