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
