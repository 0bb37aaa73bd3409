"""What a conversational message claims: the sentences that state a fact, and its valued claims.

A memory is often a turn of a conversation, not a note: "Thanks, Mel!", "Wow, any more
paintings coming up?", "You're doing an awesome job!" or a long request to an assistant with
a fact or two inside it. The supersession rule (`app/text/supersession.py`) compares
statements; a turn that states nothing cannot contradict anything, and in a long message the
words of the whole text say little about any one fact in it. This module reads:

- **stated**: the sentences that state something about the speaker or the world: not a
  question, not a request to the listener ("can you …", "please …"), not social talk
  (greetings, thanks, praise, encouragement: "Wow!", "You're doing great"), not code;
- **valued claims**: each number or code with the content words around it in its sentence
  ("a $700 budget ceiling for the new phone": 700 with budget, ceiling, phone), so that a
  changed value can be tied to the same attribute ("… budget ceiling is now $750").

Deterministic, no model, linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from app.text.lexicon import FILLER, STOPWORDS, stem, words_of
from app.text.sentences import split

# A message of more than this many words, or of more stated sentences, is a long turn: its
# facts are compared one claim at a time, never as a whole.
LONG_WORDS = 25
LONG_SENTENCES = 2
# Content words either side of a value that say what it is the value of.
CONTEXT_REACH = 4
TIGHT = 1

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
# Social openers: what follows them up to a comma or an exclamation says nothing yet.
_SOCIAL = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thank|thx|wow|whoa|congrats|congratulations|"
    r"good luck|great|awesome|amazing|cool|nice|sure|ok|okay|yes|yeah|yep|yup|no worries|"
    r"haha|lol|aw+|oh|ah|hmm|bye|cheers|sorry|omg|yay|welcome|indeed|exactly|absolutely|"
    r"of course|well done|good job|nice job|love it|love that|sounds good|sounds great|"
    r"that's (?:great|awesome|amazing|so|really|wonderful|cool|nice|good)|"
    r"that (?:sounds|is so|looks)|so (?:glad|happy|cool|sweet))\b[^\w]*(?:[A-Z]\w*[^\w\s]*)?",
    re.I,
)
# A sentence opening like these asks or requests; it does not state.
_ASKING = re.compile(
    r"^(?:how|what|when|where|why|who|whom|whose|which|can|could|would|will|shall|should|"
    r"do|does|did|is|are|was|were|have|has|any|anything|please|let me know|let's|tell me|"
    r"help me|remind me|show me|explain|keep|make sure|don't forget|always|never forget|"
    r"give me|imagine|suppose)\b",
    re.I,
)
# Asking inside a sentence: "I'm not sure if …", "… can you help me with that".
_WONDERING = re.compile(
    r"\b(?:can you|could you|would you|will you|help me|i'm wondering|i was wondering|"
    r"i wonder|not sure (?:if|how|what|whether|about)|how (?:can|do|should|would) i|"
    r"what (?:should|can|would) i|any (?:tips|advice|ideas|suggestions))\b", re.I)
_LISTENER = re.compile(r"\b(?:you|your|yours|yourself|yourselves|you're|you've|you'll|you'd|"
                       r"u)\b", re.I)
_SPEAKER = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|our|ours|"
                      r"us)\b", re.I)
_WORD = re.compile(r"[^\W_]+(?:[.:,/-][^\W_]+)*%?|\$")
_DIGIT = re.compile(r"\d")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


@dataclass(frozen=True)
class Value:
    """A number or code of a sentence and the content stems around it."""

    token: str
    kind: str  # what the value measures, read from its form: "%", "$", "ms", "h:m", "n"
    context: frozenset[str]
    tight: frozenset[str]  # the nearest content word either side: what it counts or measures
    cued: bool  # said to have changed: "increased to 7", "now at 180ms", "rescheduled to"


@dataclass(frozen=True)
class Reading:
    stated: str  # the stated sentences, joined; "" when the message states nothing
    long: bool  # compared a claim at a time, never as a whole
    values: tuple[Value, ...]
    tokens: frozenset[str]  # every word and value token of the message (outside code)


@lru_cache(maxsize=256)
def read(text: str) -> Reading:
    """What ``text`` claims."""
    plain = _CODE.sub(" ", text.replace("\u2019", "'").replace("\u2018", "'"))
    sentences = [s.text for s in split(plain)]
    stated = [s for s in sentences if states(s)]
    words = _WORD.findall(plain.lower())
    values = tuple(v for s in sentences for v in _values(s))
    return Reading(stated=" ".join(stated),
                   long=len(words) > LONG_WORDS or len(stated) > LONG_SENTENCES,
                   values=values, tokens=frozenset(value(w) for w in words))


def states(sentence: str) -> bool:
    """Whether ``sentence`` states a fact: not a question, request, or social talk."""
    text = sentence.strip()
    if text.endswith("?"):
        return False
    rest = _SOCIAL.sub("", text, count=1).strip(" ,.!-—")
    if not rest or _ASKING.match(rest):
        return False
    if rest != text and not rest[:1].isalpha():
        return False
    # Speaking of the listener and not of oneself: praise, encouragement, advice.
    if _LISTENER.search(rest) and not _SPEAKER.search(rest):
        return False
    if _WONDERING.search(rest):
        return False
    return bool(_content(rest))


def value(token: str) -> str:
    """A token as values are compared: "$2,000" and "2000", "3rd" and "3" are the same."""
    token = token.rstrip(".,").replace(",", "")
    return _ORDINAL.sub(r"\1", token)


def _content(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower())
            if w not in STOPWORDS and w not in FILLER and not _DIGIT.search(w) and len(w) > 1]


def _attribute(text: str) -> list[str]:
    """The words that may name what a value is of: content words but the framing of a request
    ("trying", "help", "kinda") and the calendar words of a date."""
    return [w for w in _content(text) if w not in _FRAMING and w not in _CUE_STEMS]


def _values(sentence: str) -> list[Value]:
    words = _WORD.findall(sentence.lower())
    found = []
    for index, word in enumerate(words):
        if not _DIGIT.search(word) or (kind := _kind(word, words[index - 1] if index else "",
                                                     words[index + 1: index + 2])) is None:
            continue
        before = _attribute(" ".join(words[max(0, index - 3 * CONTEXT_REACH):index]))
        after = _attribute(" ".join(words[index + 1:index + 1 + 3 * CONTEXT_REACH]))
        near = [w for w in words[max(0, index - 3 * CUE_REACH):index] if w not in _LINKS]
        near = near[-CUE_REACH:]
        found.append(Value(value(word), kind,
                           frozenset(before[-CONTEXT_REACH:] + after[:CONTEXT_REACH]),
                           frozenset(before[-TIGHT:] + after[:TIGHT]),
                           any(w in CUES for w in near)))
    return found


def _kind(word: str, previous: str, following: list[str]) -> str | None:
    """What a value measures, by its form; None for a name-like code ("v1.2", "52-card",
    "3^n") whose change says nothing about an attribute."""
    token = value(word)
    if re.fullmatch(r"\d+(?:\.\d+)?%", token):
        return "%"
    if re.fullmatch(r"\d{1,2}:\d{2}", token):
        return "time"
    if re.fullmatch(r"\d+(?:\.\d+)?", token):
        after = following[0] if following else ""
        if previous in MONTHS or after in MONTHS:
            return "date"
        if previous == "$" or after in _CURRENCIES:
            return "$"
        if after in ("am", "pm"):
            return "time"
        return "n"
    unit = re.fullmatch(r"\d+(?:\.\d+)?([a-z]{1,3})", token)
    if unit and unit.group(1) not in ("st", "nd", "rd", "th", "d"):
        return _UNITS.get(unit.group(1), unit.group(1))
    return None


_CURRENCIES = frozenset({"dollars", "dollar", "usd", "cad", "eur", "euros", "euro", "gbp",
                         "pounds", "aud", "inr", "rupees", "yen"})
_UNITS = {"kb": "bytes", "mb": "bytes", "gb": "bytes", "tb": "bytes", "ms": "time-span",
          "s": "time-span", "sec": "time-span", "min": "time-span", "h": "time-span",
          "hr": "time-span", "am": "time", "pm": "time", "k": "n", "m": "n"}
MONTHS = words_of("""
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec
""")
_FRAMING = frozenset(stem(w) for w in words_of("""
try trying tried help want wanted need needed sure wonder wondering kinda kind sort worried
think thinking feel feeling implement implementing make making best good great way ways
also still really get use using work working improve improving like since around about
monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday week
""")) | frozenset(stem(m) for m in MONTHS)
# Words near a value saying it changed; within this many words of it.
CUE_REACH = 2
# Words between a change word and its value that do not count as distance: "raised to $750".
_LINKS = frozenset({"to", "at", "by", "up", "down", "$", "is", "are", "was", "were", "has",
                    "have", "had", "been", "of", "the", "a", "an", "just", "about",
                    "around", "approximately", "roughly"})
CUES = words_of("""
now new currently increased increase decreased decrease raised lowered reached improved
dropped rose risen grew grown updated update rescheduled moved changed adjusted revised
extended postponed pushed instead bumped upgraded switched raise raising
""")
_CUE_STEMS = frozenset(stem(w) for w in CUES)
