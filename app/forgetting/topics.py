"""Which sentences of a memory mention a described topic (forget by description).

A sentence mentions a topic when it shares a content-word stem with the description. Stems
are PostgreSQL's own english full-text lexemes, computed in SQL for both sides, so the gate
agrees with the store's keyword search on plurals, tenses and stopwords. The english stemmer
leaves derivations apart ("allergy" → allergi, "allergic" → allerg); the one "same word" rule
(`app.text.lexicon.same_word`) joins them, as it does for the supersession rule's stems.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text as sql
from sqlmodel import Session

from app.text.lexicon import same_word
from app.text.sentences import join_kept, split

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
        shared = sum(1 for stem in self.stems if any(same_word(stem, own) for own in stems))
        return shared >= min(2, len(self.stems))

    def has_content(self, stems: frozenset[str]) -> bool:
        """Whether a sentence says anything beyond filler and weak words."""
        return not stems <= self.ignorable


def topic(session: Session, about: str) -> Topic:
    """The content stems of ``about``; weak words count only when nothing else is named."""
    words = _WORD.findall(about)
    whole, filler, weak, *each = lexemes(session, [about, FILLER_WORDS, WEAK_WORDS, *words])
    content = whole - filler
    stems = (content - weak) or content
    keywords = " ".join(word for word, own in zip(words, each, strict=True) if own & stems)
    return Topic(stems=frozenset(stems), ignorable=filler | weak, keywords=keywords)


@dataclass(frozen=True)
class Mentions:
    """How a text relates to a topic."""

    mentions: int  # sentences that mention it
    without: str  # the text without them, original separators kept
    mostly_about: bool  # nothing but filler would remain


def mentions(session: Session, topic: Topic, texts: Sequence[str]) -> dict[str, Mentions]:
    """Per distinct text: which sentences mention ``topic``, and what would remain.

    Mostly about it: every sentence mentions the topic, or what would remain says nothing
    beyond filler ("I collect sneakers. Love them!"). One SQL statement stems them all.
    """
    pieces = {original: split(original) for original in dict.fromkeys(texts)}
    stems = iter(lexemes(session, [s.text for parts in pieces.values() for s in parts]))
    judged: dict[str, Mentions] = {}
    for original, parts in pieces.items():
        own = [next(stems) for _ in parts]
        keep = [not topic.mentioned_by(s) for s in own]
        remainder = [s for s, kept in zip(own, keep, strict=True) if kept]
        judged[original] = Mentions(
            mentions=keep.count(False), without=join_kept(original, parts, keep),
            mostly_about=not any(topic.has_content(s) for s in remainder),
        )
    return judged
