"""What a short remembered statement says, read lexically: who it is about, which values it names.

The supersession rule (`app/text/supersession.py`) compares two of these. Cosine similarity
alone cannot tell "my phone is 555-1234" from "my phone is 555-9876" (a change) or "my sister
lives in Madrid" from "my brother lives in Oslo" (another person); the words can. Everything
here is deterministic and needs neither the database nor a model.

- **values**: numbers (word numbers, ordinals, "$2,000", "6am" normalised), names (capitalised
  words inside a sentence, camel case such as iPhone), codes (emails, URLs, "tulip42");
- **holders**: whom the fact is about when it is not the subject itself: a relation noun after a
  possessive ("my sister", "Ana's husband", "my wife's number") or a name leading the sentence;
- **content**: the remaining meaningful word stems (stopwords and filler dropped);
- **polarity** (an odd number of negations), and **change words** ("moved", "now", "no longer").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from app.text.lexicon import (
    ADDITIVE,
    CHANGING,
    CUE_STEMS,
    DETERMINERS,
    ENDING,
    FILLER,
    IDIOMS,
    NEGATIONS,
    NOT_STEMS,
    OPENERS,
    POSSESSIVE_REACH,
    POSSESSIVES,
    PREAMBLE,
    RELATIONS,
    SPEAKER_WORDS,
    STOPWORDS,
    WORD_NUMBERS,
    same_word,
    stem,
)

_TOKEN = re.compile(
    r"(?P<code>[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://\S+)"
    r"|(?P<num>[$€£]?\d[\d,]*(?:\.\d+)?(?:[-:/]\d+)*[^\W_]*)"
    r"|(?P<word>[^\W\d_]+(?:'[^\W\d_]+)*(?:\d\w*)?)"
    r"|(?P<end>[.!?;]+(?=\s|$)|\n)"
)
_ABBREVIATIONS = frozenset({"st", "mr", "mrs", "ms", "dr", "prof", "jr", "sr", "mt", "vs",
                            "etc", "approx"})
SPEAKER = "i"


@dataclass(frozen=True)
class Statement:
    text: str
    numbers: frozenset[str]
    names: frozenset[str]
    codes: frozenset[str]
    holders: frozenset[str]
    lead: str | None
    subject: str  # what the first sentence is about: "i" (the speaker), "office", "@ana"
    additive: bool  # "also", "too", "another": the new fact adds to what was known
    content: frozenset[str]
    words: frozenset[str]  # every word's lowercase form and stem, for "does it mention x?"
    negated: bool
    ending: frozenset[str]  # words saying a previous state is over ("no longer", "sold")
    changing: frozenset[str]  # words announcing a new state ("moved", "now")

    @property
    def values(self) -> frozenset[str]:
        return self.numbers | self.names | self.codes

    def mentions(self, token: str) -> bool:
        return token in self.words or any(same_word(token, w) for w in self.words)


# Texts whose reading is kept: enough for one write's comparisons (its new text against each
# candidate, again when a judge re-checks them) across the requests in flight, and for a
# subject written to repeatedly. Every write brings a new text, so a stream of writes keeps
# the cache full; an entry holds the text and its word sets, large for a long text.
CACHED_TEXTS = 256


@lru_cache(maxsize=CACHED_TEXTS)
def parse(text: str) -> Statement:
    """Read ``text`` into the parts the supersession rule compares."""
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    lowered = text.lower()
    numbers: set[str] = set()
    names: set[str] = set()
    codes: set[str] = set()
    holders: set[str] = set()
    content: set[str] = set()
    words: set[str] = set()
    lead: str | None = None
    negations = len(re.findall(r"n't\b", lowered)) - len(IDIOMS.findall(lowered))
    recent: list[str] = []  # lowercase words of the sentence so far
    plain: list[str] = []  # the words, names masked, for the change-word patterns
    opening: list[str] = []  # the first sentence's words, values as "#", for its subject
    sentences = 0
    last_number: str | None = None
    start = True
    for match in _TOKEN.finditer(text):
        kind, raw = match.lastgroup, match.group()
        if kind == "end":
            start = not (raw == "." and recent and recent[-1] in _ABBREVIATIONS)
            recent = [] if start else recent
            sentences += start
            plain.append("|")
            continue
        if kind in ("code", "num"):
            if kind == "code":
                codes.add(raw.lower().rstrip("."))
                words.add(raw.lower().rstrip("."))
                last_number = None
            else:
                last_number = _number(raw, numbers, codes, words)
            opening += ["#"] if sentences == 0 else []
            start = False
            continue
        base, _, clitic = raw.partition("'")
        lower = base.lower()
        if lower == "pm" and last_number is not None:  # "9 pm"
            numbers.discard(last_number)
            numbers.add(_afternoon(last_number))
            words.add(_afternoon(last_number))
        last_number = None
        if clitic.lower() == "t" and lower.endswith("n"):  # don't, can't, isn't
            lower = NOT_STEMS.get(lower[:-1], lower[:-1])
        possessive = clitic.lower() == "s" and lower not in {"it", "that", "what", "he", "she",
                                                            "there", "here", "who", "let"}
        if start and base[:1].isupper() and lower not in OPENERS and lower != "i" \
                and (possessive or not _verb_like(lower)):
            lead = lead or lower  # "Ana lives …", "Tom's birthday …": a named holder
            opening += [f"@{lower}"] if sentences == 0 else []
        elif _is_name(base, start):
            names.add(lower)
        elif any(ch.isdigit() for ch in base):
            codes.add(lower)
        relation = RELATIONS.get(lower)
        owner = recent[-POSSESSIVE_REACH:]
        if relation and any(w in POSSESSIVES or w.endswith("'s") for w in owner):
            holders.add(relation)
        words.update({lower, stem(lower), *(RELATIONS.get(lower, ""),)} - {""})
        if lower in NEGATIONS:
            negations += 1
        elif lower in WORD_NUMBERS:
            numbers.add(str(WORD_NUMBERS[lower]))
            words.add(str(WORD_NUMBERS[lower]))
        elif (lower not in STOPWORDS and lower not in FILLER and lower not in names
              and lower != lead and not any(ch.isdigit() for ch in lower)):
            content.add(stem(lower))
        recent.append(lower + ("'s" if possessive else ""))
        plain.append("_" if lower in names else lower)
        if sentences == 0 and lower != lead:
            opening.append("#" if lower in names else lower)
        start = False
    masked = " ".join(plain)
    ending = frozenset(ENDING.findall(masked))
    changing = frozenset(CHANGING.findall(masked))
    if ending or changing:
        content -= CUE_STEMS
    return Statement(
        text=text, numbers=frozenset(numbers), names=frozenset(names), codes=frozenset(codes),
        holders=frozenset(holders), lead=lead, subject=_subject(opening),
        additive=bool(ADDITIVE.search(masked)), content=frozenset(content),
        words=frozenset(words), negated=negations % 2 == 1, ending=ending, changing=changing,
    )


def _subject(opening: list[str]) -> str:
    """The head of the first sentence's subject: the speaker, a name, or a noun.

    "I …"/"We …" and sentences without a subject ("Lives in Porto") are the speaker's;
    "My new manager …" is "manager", "Our office …" is "office", "Ana …" is "@ana".
    """
    words = iter(w for w in opening if w not in PREAMBLE)
    first = next(words, "")
    if first.startswith("@"):
        return first
    if first not in DETERMINERS:
        return SPEAKER
    for word in words:
        if word == "#" or word in STOPWORDS or stem(word) in CUE_STEMS:
            continue
        return RELATIONS.get(word, stem(word))
    return SPEAKER


def speaks_of(statement: Statement, subject: str) -> bool:
    """Whether ``statement`` mentions ``subject`` anywhere (the speaker by "I", "my", "we"…)."""
    if subject == SPEAKER:
        return bool(statement.words & SPEAKER_WORDS) or statement.subject == SPEAKER
    return statement.mentions(subject.removeprefix("@"))


def _verb_like(word: str) -> bool:
    """A sentence-initial word that is more likely a verb than a name: "Lives", "Visiting"."""
    return word.endswith("s") or (len(word) > 4 and word.endswith(("ing", "ed")))


def _is_name(word: str, start: bool) -> bool:
    if word.lower() == "i":
        return False
    camel = any(ch.isupper() for ch in word[1:]) and any(ch.islower() for ch in word)
    capitalised = word[:1].isupper() and not start
    return camel or capitalised


def _number(raw: str, numbers: set[str], codes: set[str], words: set[str]) -> str | None:
    """Record a token holding digits; returns its value when it is a plain number."""
    token = raw.lstrip("$€£").rstrip(",.")
    match = re.fullmatch(r"(\d[\d,]*(?:\.\d+)?)(st|nd|rd|th|am|pm|k)?", token.lower())
    if match is None:
        codes.add(token.lower())  # phone numbers, times, dates, serials: compared as written
        words.add(token.lower())
        return None
    value = match.group(1).replace(",", "")
    if match.group(2) == "k" and value.isdigit():
        value = str(int(value) * 1000)
    if match.group(2) == "pm":
        value = _afternoon(value)
    numbers.add(value)
    words.add(value)
    return value


def _afternoon(value: str) -> str:
    """9pm is 21, so it differs from 9am; "6am" and "6 am" stay 6."""
    return str(int(value) + 12) if value.isdigit() and int(value) < 12 else value
