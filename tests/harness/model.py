"""The reference model the history machine checks the service against.

It knows, for one tenant, every memory a history made: whose it is, the marker words each of
its versions ever carried, the state it must be in, the last revision read, and the holds,
excluded sources and erasures that decide what may still exist. It makes no request itself.

Every memory text is built from marker words that occur nowhere else in the history
(`Vocabulary`), so "is a forgotten text still in the database?" becomes "does any row of the
tenant contain one of these markers?", with no ambiguity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

LIVE = frozenset({"active", "suspect"})
# Recall may return only these as results (a deprecated memory only inside `history`).
RECALLABLE = LIVE
SUBJECTS = ("user:ana", "user:ben")
SOURCES = ("conversation:1", "conversation:2", "conversation:3")

# Each sentence is a template around one marker word; a memory holds one or three sentences
# (three, so that forget by description has a memory that only mentions what it is about).
TEMPLATES = (
    "I own a {w}.",
    "My cat is called {w}.",
    "I work at {w} Labs.",
    "I was born in {w}.",
    "My favourite dish is {w}.",
    "I play the {w} on weekends.",
)
_SYLLABLES = ("ka", "zu", "mo", "ri", "te", "vo", "la", "ne", "pi", "do", "gu", "bi")
_CODAS = ("k", "t", "r", "n", "m", "x", "l", "d")
# The database is searched for this many leading letters of a marker: full-text search
# keeps stems ("kazumor" may be stored as a shorter stem), never a longer word.
PREFIX = 6


def marker(index: int) -> str:
    """The ``index``-th marker word: three syllables (the part the database is searched
    for, unique for every index below 12³) and a coda."""
    n = len(_SYLLABLES)
    a, rest = divmod(index % n ** 3, n * n)
    b, c = divmod(rest, n)
    return _SYLLABLES[a] + _SYLLABLES[b] + _SYLLABLES[c] + _CODAS[index % len(_CODAS)]


@dataclass
class Vocabulary:
    """Hands out fresh markers, so no two sentences of a history share one."""

    used: int = 1
    issued: set[str] = field(default_factory=set)

    def fresh(self) -> str:
        word = marker(self.used * 37)
        self.used += 1
        self.issued.add(word)
        return word

    def sentence(self, template: int) -> tuple[str, str]:
        word = self.fresh()
        return TEMPLATES[template % len(TEMPLATES)].format(w=word), word


def words_in(text: str, known: set[str]) -> set[str]:
    """The known markers a text carries (case-insensitive, whole words)."""
    found = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    return {w for w in known if w in found}


def about_phrase(sentence: str) -> str:
    """A forget-by-description phrase for one sentence: "I own a kazumor." → "that I own a
    kazumor"."""
    body = sentence.rstrip(".")
    if body.startswith("My "):
        body = "my " + body[3:]
    return "that " + body


@dataclass
class Memory:
    id: str
    subject: str
    source: str | None
    key: str | None
    sentences: list[str]            # the current text, sentence by sentence
    words: set[str]                 # every marker any version still holds
    state: str = "active"
    revision: int = 1
    versions: int = 1
    derived_from: list[str] = field(default_factory=list)
    age_days: float = 0.0           # time since its state last changed, as retention sees it
    version_words: list[set[str]] = field(default_factory=list)
    current: int | None = None      # the current version's index after a revert; None: latest

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    @property
    def current_words(self) -> set[str]:
        if not self.version_words:
            return set()
        return self.version_words[-1 if self.current is None else self.current]


@dataclass
class Hold:
    id: str
    subject: str | None
    memory_ids: frozenset[str]
    active: bool = True


@dataclass
class Recorded:
    """A request sent with an Idempotency-Key, and its first answer, for replays."""

    method: str
    path: str
    body: dict[str, Any]
    key: str
    headers: dict[str, str]
    status: int
    answer: Any
    memory_id: str | None


@dataclass
class Model:
    memories: dict[str, Memory] = field(default_factory=dict)
    holds: dict[str, Hold] = field(default_factory=dict)
    excluded: set[str] = field(default_factory=set)
    recorded: list[Recorded] = field(default_factory=list)
    # Markers that must be nowhere at all (after an erasure, retraction phrases included) and
    # markers that may survive only in a retraction's `about` phrase (the caller's words).
    erased_words: set[str] = field(default_factory=set)
    about_words: dict[str, set[str]] = field(default_factory=dict)
    ingestions: list[str] = field(default_factory=list)
    erasures: list[tuple[str, str]] = field(default_factory=list)  # (request id, subject)
    # Markers a forget or strike removed (whatever else still holds them is subtracted).
    gone_words: set[str] = field(default_factory=set)
    vocabulary: Vocabulary = field(default_factory=Vocabulary)

    def held(self, memory: Memory) -> bool:
        return any(hold.active and (memory.id in hold.memory_ids or hold.subject == memory.subject)
                   for hold in self.holds.values())

    def of_state(self, *states: str) -> list[Memory]:
        return [m for m in self.memories.values() if m.state in states]

    def kept_words(self) -> set[str]:
        """Markers some memory that is not forgotten still legitimately holds."""
        kept: set[str] = set()
        for memory in self.memories.values():
            if memory.state != "forgotten":
                kept |= memory.words
        return kept

    def forbidden(self) -> tuple[set[str], set[str]]:
        """(markers allowed nowhere, markers allowed only in a retraction's `about`)."""
        kept = self.kept_words()
        nowhere = (self.erased_words - kept)
        return nowhere, (self.gone_words - kept) - nowhere

    def descendants(self, ids: set[str]) -> set[str]:
        """``ids`` and every memory derived from them, transitively (any subject)."""
        found = set(ids)
        grew = True
        while grew:
            grew = False
            for memory in self.memories.values():
                if memory.id not in found and found.intersection(memory.derived_from):
                    found.add(memory.id)
                    grew = True
        return found

    def forget(self, memory: Memory) -> None:
        memory.state = "forgotten"
        self.gone_words |= memory.words
        memory.words = set()
        memory.version_words = [set() for _ in memory.version_words]
