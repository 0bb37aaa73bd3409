"""Sentences of a memory's text.

Forget-by-description strikes whole sentences, so the pieces must rebuild the text exactly:
each sentence is a (start, end) span of the text, and what lies between two spans is the
separator used when the sentences around a struck one are joined again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Terminal punctuation (with closing quotes or brackets) followed by whitespace or the end. A
# full stop inside a number ("3.5") or an address ("lethe.dev") has no space after it, so it
# never ends a sentence. A line break always does: notes are often one fact per line.
_BOUNDARY = re.compile(r"[.!?…]+[\"'”\u2019)\]]*(?=\s|$)|\n")
_WORD_BEFORE_DOT = re.compile(r"([^\W\d_]+(?:\.[^\W\d_]+)*)\.$")
# Titles before a name never end a sentence ("I see Dr. Patel on Mondays").
_TITLES = frozenset({"mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "mt"})
# These end a sentence only when a capital letter follows ("… e.g. boots" goes on).
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "approx", "cf", "ca", "incl", "esp", "no", "vs"})
_LOOKBACK = 16


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str


def split(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order, whitespace-trimmed, terminal punctuation kept."""
    spans: list[Sentence] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        if boundary.group() == "\n":
            end = boundary.start()
        elif _is_abbreviation(text, boundary):
            continue
        else:
            end = boundary.end()
        _append_trimmed(spans, text, start, end)
        start = boundary.end()
    _append_trimmed(spans, text, start, len(text))
    return spans


def join_kept(text: str, sentences: Sequence[Sentence], keep: Sequence[bool]) -> str:
    """``text`` without the sentences not kept, each gap closed with an original separator.

    Between two kept sentences goes the separator that followed the first of them, so "A. B.
    C." without B reads "A. C." with the original spacing; leading and trailing whitespace
    of the text stays as it was.
    """
    kept = [index for index, wanted in enumerate(keep) if wanted]
    if not kept:
        return ""
    parts = [text[: sentences[0].start]]
    for position, index in enumerate(kept):
        sentence = sentences[index]
        parts.append(sentence.text)
        if position + 1 < len(kept):
            parts.append(text[sentence.end : sentences[index + 1].start])
    parts.append(text[sentences[-1].end :])
    return "".join(parts)


def _append_trimmed(spans: list[Sentence], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append(Sentence(start, end, text[start:end]))


def _is_abbreviation(text: str, boundary: re.Match[str]) -> bool:
    """A single full stop after a title, a known abbreviation or an initial."""
    if boundary.group() != ".":
        return False
    window = text[max(0, boundary.start() - _LOOKBACK) : boundary.end()]
    word = _WORD_BEFORE_DOT.search(window)
    if word is None:
        return False
    lowered = word.group(1).lower()
    if lowered in _TITLES:
        return True
    following = text[boundary.end() :].lstrip(" \t")[:1]
    is_initial = len(lowered) == 1 and lowered not in {"i", "a"}
    if lowered in _ABBREVIATIONS or is_initial:
        return following != "" and not following.isupper()
    return False
