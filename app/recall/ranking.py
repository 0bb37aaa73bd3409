"""Reciprocal rank fusion: combine ranked candidate lists without comparing their scores.

Cosine distances and full-text ranks live on different scales; RRF uses only positions, so
neither list needs calibrating against the other.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

RRF_K = 60


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[K]], *, k: int = RRF_K
) -> list[tuple[K, float]]:
    """Items by descending Σ 1/(k + rank); ties keep first-seen order (stable)."""
    scores: dict[K, float] = {}
    for ranked in ranked_lists:
        for position, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + position)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)
