"""Sentences of a text: the one splitter behind forget-by-description and request detection.

Forget-by-description strikes whole sentences, so the pieces must rebuild the text exactly:
each sentence is a (start, end) span of the text, and what lies between two spans is the
separator used when the sentences around a struck one are joined again. The forget-request
detector splits a copy of a message whose quotations are masked character for character, so
the spans stay valid for the original; it asks for soft wraps to be joined (chat messages are
often wrapped mid-sentence).

Everything is compiled regexes and bounded scans, linear in the length of the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# Terminal punctuation (with closing quotes or brackets) followed by whitespace or the end. A
# full stop inside a number ("3.5") or an address ("lethe.dev") has no space after it, so it
# never ends a sentence. A line break does too: notes are often one fact per line.
_BOUNDARY = re.compile(r"[.!?…]+[\"'”\u2019)\]]*(?=\s|$)|\n")
_WORD_BEFORE_DOT = re.compile(r"([^\W\d_]+(?:\.[^\W\d_]+)*)\.$")
# Titles before a name never end a sentence ("I see Dr. Patel on Mondays").
_TITLES = frozenset({"mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "mt"})
# These, dotted ones ("e.g.", "U.S.", "p.m.") and initials end a sentence only when a capital
# letter follows ("… e.g. boots" goes on).
_ABBREVIATIONS = frozenset({"etc", "approx", "cf", "ca", "incl", "esp", "vs"})
# "No." abbreviates "number" only before one ("flat no. 5"); "no. please …" is the word no.
_NUMBER = "no"
# Longer than any abbreviation above; a longer word cut by the window matches none of them.
_LOOKBACK = 16


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str


def split(text: str, *, soft_wraps: bool = False) -> list[Sentence]:
    """The sentences of ``text`` in order, whitespace-trimmed, terminal punctuation kept."""
    return [Sentence(start, end, text[start:end])
            for start, end in spans(text, soft_wraps=soft_wraps)]


def spans(text: str, *, soft_wraps: bool = False) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, as `split` finds them.

    Every line break ends a sentence, unless ``soft_wraps`` is set and the break falls
    mid-sentence: a word or comma before it and a lower-case word after it.
    """
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        if boundary.group() == "\n":
            if soft_wraps and _is_soft_wrap(text, boundary.start()):
                continue
            end = boundary.start()
        elif _is_abbreviation(text, boundary):
            continue
        else:
            end = boundary.end()
        yield from _trimmed(text, start, end)
        start = boundary.end()
    yield from _trimmed(text, start, len(text))


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


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        yield start, end


def _is_soft_wrap(text: str, newline: int) -> bool:
    """A word or comma before the line break and a lower-case letter after it.

    Only the adjacent characters are inspected, so long runs of blank lines stay linear.
    """
    before = newline - 1
    if before >= 0 and text[before] == "\r":
        before -= 1
    if before < 0 or newline + 1 >= len(text):
        return False
    previous, following = text[before], text[newline + 1]
    return (previous.isalnum() or previous == ",") and following.islower()


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
    # The first character after the spaces, found without copying the rest of the text.
    after = boundary.end()
    while after < len(text) and text[after] in " \t":
        after += 1
    following = text[after : after + 1]
    if lowered == _NUMBER:
        return following.isdigit()
    is_initial = len(lowered) == 1 and lowered not in {"i", "a"}
    if lowered in _ABBREVIATIONS or "." in lowered or is_initial:
        return following != "" and not following.isupper()
    return False
