"""BM25 (Okapi): how well a text's terms answer a query's, against the texts it is among.

Terms are PostgreSQL's english lexemes of a text (`to_tsvector('english', …)`, stop words
removed, words stemmed): the one tokenizer of keyword search, which the database also keeps
per-subject statistics of (migration 0021). This module only scores; the large-subject path
computes the same formula in SQL (`lethe_bm25`) with these constants.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# The textbook values (Robertson and Zaragoza's range; Lucene's and Elasticsearch's defaults).
K1 = 1.2
B = 0.75


def idf(documents: int, frequency: int) -> float:
    """A term's weight among ``documents`` texts of which ``frequency`` hold it: the
    Robertson–Spärck Jones weight plus one inside the log, so a term in most of them still
    weighs a little more than nothing, never less."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def term_score(weight: float, frequency: int, length: float, average: float) -> float:
    """One term's part of a text's score: its weight, saturating in how often the text holds
    it, a long text's occurrences counting for less."""
    return weight * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))


@dataclass(frozen=True)
class Document:
    """What BM25 reads of one text: its length in terms and, of the query's terms, how often
    it holds each."""

    length: int
    frequencies: Mapping[str, int]


def rank(documents: Sequence[Document], terms: frozenset[str], *,
         eligible: Sequence[bool] | None = None) -> list[tuple[int, float]]:
    """(index, score) of the documents holding a query term, best first (ties by index),
    with frequencies and average length over all ``documents``; only ``eligible`` ones are
    ranked, when given."""
    total = len(documents)
    if not total:
        return []
    average = sum(document.length for document in documents) / total
    if average <= 0:
        return []
    held: dict[str, int] = {}
    for document in documents:
        for term in document.frequencies:
            if term in terms:
                held[term] = held.get(term, 0) + 1
    weights = {term: idf(total, count) for term, count in held.items()}
    scored = []
    for index, document in enumerate(documents):
        if eligible is not None and not eligible[index]:
            continue
        found = sorted(term for term in document.frequencies if term in weights)
        if found:
            score = math.fsum(term_score(weights[term], document.frequencies[term],
                                         document.length, average) for term in found)
            scored.append((index, score))
    scored.sort(key=lambda item: -item[1])
    return scored
