"""Sentences of a memory's text, and which of them mention a described topic.

Forget-by-description strikes whole sentences, so the pieces must rebuild the text exactly:
each sentence is a (start, end) span of the text, and what lies between two spans is the
separator used when the sentences around a struck one are joined again.

A sentence mentions a topic when it shares a content-word stem with the description. Stems
are PostgreSQL's own english full-text lexemes, computed in SQL for both sides, so the gate
agrees with the store's keyword search on plurals, tenses and stopwords.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text as sql
from sqlmodel import Session

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


# ---------------------------------------------------------------------------------------------
# Topics: which sentences mention what a forget request describes.
# ---------------------------------------------------------------------------------------------

# Words of a request that say nothing about its topic ("forget what I *said* about …"). The
# english text-search configuration already drops pronouns, auxiliaries, "that", "what",
# "about"; these are stemmed by the same configuration, so "told"/"telling" match as stems.
FILLER_WORDS = (
    "said say says saying tell told telling mention mentioned mentioning talk talked "
    "forget forgot forgotten forgetting remember remembered remembering memory memories "
    "please pls plz kindly thanks thank ok okay yes yeah "
    "thing things stuff everything anything something whatever "
    "fact facts info information detail details bit part "
    "always never often usually sometimes really actually mostly also still just"
)
# Words so common in facts about a person that alone they do not name a topic: "forget that I
# like cats" must not strike "I like dogs". They count only when the request has nothing else.
WEAK_WORDS = (
    "like likes liked love loves loved enjoy enjoys hate hates prefer want wants need needs "
    "get gets got go goes went use uses used make makes made live lives lived work works "
    "worked feel feels think thinks take takes keep keeps buy buys bought "
    "old new previous former current last first recent"
)

# One statement stems every text the same way the store's search vectors do.
_LEXEMES_SQL = sql(
    """
    SELECT u.ord, tsvector_to_array(to_tsvector('english', u.t))
    FROM unnest(CAST(:texts AS text[])) WITH ORDINALITY AS u(t, ord)
    ORDER BY u.ord
    """
)
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")


def lexemes(session: Session, texts: Sequence[str]) -> list[frozenset[str]]:
    """The english full-text lexemes of each text (stopwords dropped, words stemmed)."""
    if not texts:
        return []
    rows = session.execute(_LEXEMES_SQL, {"texts": list(texts)}).all()
    return [frozenset(row[1]) for row in rows]


@dataclass(frozen=True)
class Topic:
    """The stems a request names, and the words to search for them."""

    stems: frozenset[str]
    ignorable: frozenset[str]
    keywords: str

    def mentioned_by(self, stems: frozenset[str]) -> bool:
        """Shares two of the topic's stems (or its only one).

        One shared word is not a mention: "forget that I collect sneakers" must not strike
        "I now collect stamps", nor "forget my sister's wedding" strike "my sister lives in
        Madrid".
        """
        shared = sum(1 for stem in self.stems if any(_same_word(stem, own) for own in stems))
        return shared >= min(2, len(self.stems))

    def has_content(self, stems: frozenset[str]) -> bool:
        """Whether a sentence says anything beyond filler and weak words."""
        return not stems <= self.ignorable


def _same_word(a: str, b: str) -> bool:
    # The english stemmer leaves derivations apart ("allergy" → allergi, "allergic" → allerg);
    # a shared prefix of five letters or more is the same word for this purpose.
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 5 and long_.startswith(short)


def topic(session: Session, about: str) -> Topic:
    """The content stems of ``about``; weak words count only when nothing else is named."""
    words = _WORD.findall(about)
    whole, filler, weak, *each = lexemes(session, [about, FILLER_WORDS, WEAK_WORDS, *words])
    content = whole - filler
    stems = (content - weak) or content
    keywords = " ".join(word for word, own in zip(words, each, strict=True) if own & stems)
    return Topic(stems=frozenset(stems), ignorable=filler | weak, keywords=keywords)


@dataclass(frozen=True)
class Judgement:
    """How a text relates to a topic."""

    mentions: int  # sentences that mention it
    without: str  # the text without them, original separators kept
    mostly_about: bool  # nothing but filler would remain


def judge(session: Session, topic: Topic, texts: Sequence[str]) -> dict[str, Judgement]:
    """Per distinct text: which sentences mention ``topic``, and what would remain.

    Mostly about it: every sentence mentions the topic, or what would remain says nothing
    beyond filler ("I collect sneakers. Love them!"). One SQL statement stems them all.
    """
    pieces = {original: split(original) for original in dict.fromkeys(texts)}
    stems = iter(lexemes(session, [s.text for parts in pieces.values() for s in parts]))
    judged: dict[str, Judgement] = {}
    for original, parts in pieces.items():
        own = [next(stems) for _ in parts]
        keep = [not topic.mentioned_by(s) for s in own]
        remainder = [s for s, kept in zip(own, keep, strict=True) if kept]
        judged[original] = Judgement(
            mentions=keep.count(False), without=join_kept(original, parts, keep),
            mostly_about=not any(topic.has_content(s) for s in remainder),
        )
    return judged
