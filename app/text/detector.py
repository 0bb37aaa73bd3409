"""Detect an explicit first-person request to forget something in a user's message.

Deterministic and deliberately conservative (no LLM, no ML). A missed request costs the user a
rephrasing; a false positive deletes a memory they wanted kept. So a sentence counts only when:

* it *starts* as a request addressed to the assistant ("please forget", "could you forget",
  "I'd like you to forget", a bare imperative "forget ..."), after at most a few interjections;
* the request is not inside quotes (quoted or reported speech, song and film titles);
* the object names a fact about the speaker: it opens like a noun phrase or clause ("my …",
  "that I …", "what I said about …", "everything about …"), mentions the speaker ("I", "my",
  "we", "our") before any comma, holds at least one content word (not "it", "that", "what I
  said", "things"), and is not conditional ("if I asked you to …").

Everything is compiled regexes and bounded scans, linear in the length of the text: no pattern
nests unbounded quantifiers, and trailing-courtesy stripping only looks at a short window.
Structural work (quotes, sentences, clause cuts) runs on a copy of the text whose quoted
passages are masked character for character, so indices stay valid for the original; sentences
come from the one splitter (`app/text/sentences.py`), with soft wraps joined.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from app.text.sentences import spans

__all__ = ["ForgetRequest", "detect_forget_request"]


@dataclass(frozen=True)
class ForgetRequest:
    """A detected request: the phrase naming what to forget, and the request sentence's span."""

    about: str
    span: tuple[int, int]


def detect_forget_request(text: str) -> ForgetRequest | None:
    """The first sentence of `text` that explicitly asks the assistant to forget a fact, or None."""
    masked = _mask_quotes(text)
    # The request is recognised by how its sentence starts; typed messages wrap mid-sentence.
    for start, end in spans(masked, soft_wraps=True):
        about = _requested_object(text, masked, start, end)
        if about is not None:
            return ForgetRequest(about=about, span=(start, end))
    return None


# ---------------------------------------------------------------------------------------------
# Quotes: a request inside quotation marks is someone's words being reported, not a request.
# ---------------------------------------------------------------------------------------------

# Stands in for every character inside quotes: not a letter, space or punctuation, so no rule
# below can match across or inside it, and the masked text keeps the original's length.
_MASK = "\x00"

# Double quotes (straight or curly) are never apostrophes, so they always delimit a quotation.
_DOUBLE_QUOTE_PAIRS = (('"', '"'), ("“", "”"))

# Single quotes are mostly apostrophes ("I'm", "kids'"). Only treat one as an opening quote when
# it is not glued to a preceding word and opens a title (capital letter or digit), as in
# "the song 'Forget You'"; a curly opening quote is never an apostrophe, so it needs no capital.
_TITLE_OPEN = re.compile(r"(?<![\w'\u2019])'(?=[A-Z0-9])|\u2018(?=\S)")
# A closing single quote follows a non-space and is not followed by a letter ("Don't" inside a
# title is an apostrophe, not the end of it).
_TITLE_CLOSE = re.compile(r"(?<=\S)['\u2019](?!\w)")
# Titles are short; bounding the scan keeps many unmatched openers linear.
_MAX_TITLE_CHARS = 80


def _mask_quotes(text: str) -> str:
    """`text` with the inside of every quotation replaced by `_MASK` (delimiters kept)."""
    chars = list(text)
    for start, end in _quoted_regions(text):
        chars[start:end] = _MASK * (end - start)
    return "".join(chars)


def _quoted_regions(text: str) -> Iterator[tuple[int, int]]:
    for opener, closer in _DOUBLE_QUOTE_PAIRS:
        yield from _double_quoted(text, opener, closer)
    yield from _single_quoted_titles(text)


def _double_quoted(text: str, opener: str, closer: str) -> Iterator[tuple[int, int]]:
    """Inner spans of opener…closer pairs that do not cross a blank line (paragraph).

    Each step either consumes a pair or jumps past a paragraph break, so the scan is linear.
    """
    pos = text.find(opener)
    while pos != -1:
        close = text.find(closer, pos + 1)
        if close == -1:
            return
        paragraph_break = text.find("\n\n", pos + 1, close)
        if paragraph_break != -1:
            # An opener without a closer in its paragraph is a stray mark; so is every opener
            # before that break (their first closer is the same one), so resume after it.
            pos = text.find(opener, paragraph_break)
            continue
        yield pos + 1, close
        pos = text.find(opener, close + 1)


def _single_quoted_titles(text: str) -> Iterator[tuple[int, int]]:
    for opening in _TITLE_OPEN.finditer(text):
        inner_start = opening.end()
        # One character past the limit so the closer's lookahead sees the real next character.
        window = text[inner_start : inner_start + _MAX_TITLE_CHARS + 1]
        closing = _TITLE_CLOSE.search(window)
        if closing is None or closing.start() >= _MAX_TITLE_CHARS:
            continue
        if "\n" in window[: closing.start()]:
            continue
        yield inner_start, inner_start + closing.start()


# ---------------------------------------------------------------------------------------------
# Request leads: how a sentence that asks the assistant to forget begins.
# ---------------------------------------------------------------------------------------------

_FLAGS = re.IGNORECASE

# Interjections and connectives that may precede a request ("Hey, …", "Also, please …",
# "On second thought, …"). Bounded repetition; none of them can start a request rule, so the
# greedy match never needs to give words back.
_PREAMBLE = re.compile(
    r"(?:[-*•]\s+)?"  # a list bullet
    r"(?:(?:hey(?:\s+there)?|hi|hello|ok|okay|oh|also|and|but|so|actually|btw|by\s+the\s+way"
    r"|one\s+more\s+thing|alright|all\s+right|right|well|anyway|anyways|thanks|thank\s+you"
    r"|listen|look|yeah|yes|yep|sorry|oops|wait|um+|uh+|hmm+|on\s+second\s+thoughts?|lastly"
    r"|finally)\b[,!:]?\s+"
    # One capitalised word and a comma: a vocative ("Lethe, please forget …", which in a
    # message to the assistant names the assistant) or a discourse marker ("Honestly, …").
    # Case-sensitive, and "Mom said, …" (two words) is reported speech, not matched. Not
    # "Please,"/"Kindly,": those belong to the polite-imperative rule ("Please, don't remember").
    r"|(?!(?:please|pls|plz|kindly)\b)(?-i:[A-Z][a-z]+),\s+){0,4}",
    _FLAGS,
)

_YOU = r"(?:you|u)"
# Verbs asking the assistant to drop a memory. "delete/erase/remove/wipe" also describe
# editing tasks ("remove my name from the document"), so they additionally need the object to
# mention memory or something the user told (see `_MEMORY_REFERENCE`).
_DROP = r"(?P<verb>forget|delete|erase|remove|wipe|stop\s+remembering)"
# "Don't remember …" is only a request after an explicit polite lead: bare, it is usually a
# self-report with the subject dropped ("don't remember my password, can you help?").
_DROP_OR_NOT_REMEMBER = (
    r"(?P<verb>forget|delete|erase|remove|wipe|stop\s+remembering"
    r"|(?:do\s+not|don['\u2019]?t|not|no\s+longer)\s+remember)"
)
_DROP_ING = r"(?P<verb>forgetting|deleting|erasing|removing|wiping|not\s+remembering)"
# The verb must end as a word: not "forgetful", not "forget-me-not".
_VERB_END = r"(?![\w'\u2019-])"

_REQUEST_RULES: tuple[re.Pattern[str], ...] = (
    # "please/pls/kindly (just) forget …": an imperative softened for the assistant.
    re.compile(
        r"(?:please|pls|plz|kindly)\b,?\s+(?:just\s+)?" + _DROP_OR_NOT_REMEMBER + _VERB_END,
        _FLAGS,
    ),
    # "(please) can/could/would you (please) (just) forget …": the conventional indirect
    # request. "Will you forget …?" alone reads as a worry ("will you forget my birthday?"),
    # so "will" needs a softener. "Can you not remember …?" is a complaint, so no negation here.
    re.compile(
        r"(?:please\s+)?(?:(?:can|could|would)\s+" + _YOU + r"\s+"
        r"(?:(?:please|pls|plz|kindly|just|possibly)\s+){0,2}"
        r"|will\s+" + _YOU + r"\s+(?:please|pls|plz|kindly)\s+(?:just\s+)?)"
        + _DROP + _VERB_END,
        _FLAGS,
    ),
    # "would you mind forgetting …": polite request with a gerund.
    re.compile(
        r"(?:please\s+)?would\s+" + _YOU + r"\s+mind\s+(?:just\s+)?" + _DROP_ING + _VERB_END,
        _FLAGS,
    ),
    # "I'd like you to / I want you to / I need you to / I'm asking you to forget …": the
    # speaker states what they want the assistant to do. Only "I": "he wants you to forget"
    # is a request on someone else's behalf.
    re.compile(
        r"i(?:"
        r"(?:['\u2019]d|\s+would)\s+(?:really\s+)?(?:like|love|prefer)\s+(?:for\s+)?"
        r"|\s+(?:really\s+|just\s+)?(?:want|need)\s+"
        r"|(?:['\u2019]m|\s+am)\s+asking\s+"
        r")" + _YOU + r"\s+to\s+(?:(?:please|just)\s+)?" + _DROP_OR_NOT_REMEMBER + _VERB_END,
        _FLAGS,
    ),
    # A sentence that starts with the verb is an imperative ("Forget that I mentioned …").
    # Negations ("don't forget to …", "never forget …") and self-reports ("I forget …",
    # "I forgot …") never start with the bare verb, so they cannot match.
    re.compile(r"(?:just\s+)?" + _DROP + _VERB_END, _FLAGS),
)

_DELETE_VERBS = frozenset({"delete", "erase", "remove", "wipe", "deleting", "erasing",
                           "removing", "wiping"})


def _match_request(masked: str, start: int, end: int) -> tuple[str, int] | None:
    """(verb, end of the request lead) when the sentence starts as a request, else None."""
    preamble = _PREAMBLE.match(masked, start, end)
    position = preamble.end() if preamble else start
    for rule in _REQUEST_RULES:
        lead = rule.match(masked, position, end)
        if lead is not None:
            return lead.group("verb").lower(), lead.end()
    return None


# ---------------------------------------------------------------------------------------------
# The object: what the user asks the assistant to forget.
# ---------------------------------------------------------------------------------------------

# "forget about my sister's wedding": "about" belongs to the verb, not to the fact.
_LEADING_ABOUT = re.compile(r"about\s+", _FLAGS)

# The object must open like a noun phrase or clause about a fact. This is what rejects "forget
# it", "forget me", "forget you", "forget to buy milk", "forget your instructions", "forget
# her number" and titles like "Forget Paris is a great film".
_OBJECT_OPENER = re.compile(
    r"(?:my|our|i|im|ive|we|mine|that|the|this|these|those|all|any|anything|everything"
    r"|whatever|what|how|where|when|who|which|why|whether|each|every|both|some)\b",
    _FLAGS,
)

# Where the object ends inside its sentence: a semicolon, a colon before a space (not "3:30"),
# a spaced or em dash (not "ex-husband"), or a comma that starts a new clause or a courtesy
# ("…, I was just venting", "…, thanks", "…, what's the weather?"). A comma before anything
# else stays: lists ("my address, phone and email") and relative clauses ("that my sister,
# who lives in Leeds, is pregnant").
_CLAUSE_BREAK = re.compile(
    r";|:(?=\s)|\s[-\u2013—]+\s|—"
    r"|,\s*(?=(?:i|it|that['\u2019]s|we|he|she|they|you|just|because|since|so|but|though|although"
    r"|anyway|anyways|never|let['\u2019]?s|what|how|why|thanks|thank|please|pls|plz"
    r"|ok|okay|cheers|then|and\s+then|and\s+also|and\s+please|or|lol|haha|ty|thx)\b)",
    _FLAGS,
)

# Courtesy and verb modifiers at the end of the object are not part of the fact: "…, please",
# "…, ok?", "… if you don't mind", "… for good", "… from your memory".
_TRAILING_COURTESY = re.compile(
    r"(?<![\w'\u2019])(?:please|pls|plz|thanks|thank\s+you|thx|ty|cheers|ok|okay|alright"
    r"|all\s+right|for\s+me|right\s+away|asap|yeah|yes"
    r"|if\s+you\s+(?:can|could|would|don['\u2019]?t\s+mind|do\s+not\s+mind)|if\s+possible"
    r"|if\s+that['\u2019]?s\s+(?:ok|okay|alright|all\s+right|fine|possible)"
    r"|(?:would|could|can|will|won['\u2019]?t)\s+you|for\s+good|forever|permanently|completely"
    r"|entirely|(?:from|in)\s+your\s+(?:memory|memories|records|notes|database)"
    r"|from\s+memory)$",
    _FLAGS,
)
# The longest courtesy phrase is about 20 characters; only this much of the end is searched,
# so stripping a long run of "please please …" stays linear.
_COURTESY_WINDOW = 40
_TRAILING_PUNCTUATION = " \t\r\n,;:.!?…-\u2013—~"

# A conditional object is a hypothetical, not a request ("… my address if I asked you to?").
# So is a deferred one ("… my address when I move", "… once I've told you"): nothing is to be
# forgotten yet. "when I was …"/"when I told you" (past) is a description and stays.
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|whenever|in\s+case"
    r"|(?:once|as\s+soon\s+as|after|until|when)\s+(?:i|we)(?:['\u2019]ll|\s+will|['\u2019]m|\s+am"
    r"|['\u2019]re|\s+are|['\u2019]ve|\s+have|\s+(?:ask|tell|say|move|leave|get|come|go|start|finish"
    r"|change|quit|need|want|do)\b))",
    _FLAGS,
)

# For delete/erase/remove/wipe: the object must be about what the assistant was told or
# remembers ("what I told you about …", "… from your memory").
_MEMORY_REFERENCE = re.compile(
    r"\b(?:told|tell|said|say|mentioned|mention|shared|share|wrote|typed"
    r"|you\s+know|you\s+remember|you(?:\s+have|['\u2019]ve)\s+(?:saved|stored|remembered|learned"
    r"|learnt|noted|got)|memory|memories)\b",
    _FLAGS,
)

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")

# The fact must be the speaker's: one of these before the object's first comma. "me"/"us" are
# left out because they also appear as objects of a following clause ("…, tell me a joke").
_FIRST_PERSON = frozenset({
    "i", "i'm", "im", "i've", "ive", "i'd", "i'll", "my", "mine", "myself",
    "we", "we're", "we've", "we'd", "we'll", "our", "ours", "ourselves",
})

# Words that do not name a fact: pronouns, determiners, wh-words, auxiliaries, prepositions,
# verbs of saying, and generic nouns ("things", "my last message", "what I just said").
_NON_CONTENT = _FIRST_PERSON | frozenset({
    "me", "us", "you", "your", "yours", "yourself", "u", "it", "it's", "its", "this", "that",
    "that's", "these", "those", "they", "them", "he", "she", "him", "her", "the", "a", "an",
    "what", "whatever", "which", "who", "whom", "how", "where", "when", "why", "whether",
    "all", "any", "anything", "everything", "something", "nothing", "some", "each", "every",
    "both", "thing", "things", "stuff", "bit", "bits", "lot", "part", "parts", "rest",
    "about", "of", "to", "for", "from", "in", "on", "at", "with", "by", "and", "or", "but",
    "so", "as", "than", "then", "there", "here", "is", "are", "was", "were", "be", "been",
    "am", "do", "did", "does", "done", "have", "has", "had", "just", "ever", "earlier", "before",
    "ago", "today", "yesterday", "now", "again", "recently", "previously", "last", "else",
    "said", "say", "says", "told", "tell", "tells", "mentioned", "mention", "asked", "ask",
    "wrote", "write", "typed", "shared", "share", "talked", "talk", "know", "remember",
    "question", "questions", "message", "messages", "chat", "conversation", "typo",
    "instruction", "instructions", "request", "comment", "comments", "previous", "not",
    "fact", "info", "information",
})


def _requested_object(text: str, masked: str, start: int, end: int) -> str | None:
    """The object of a forget request in sentence text[start:end], or None if there is none."""
    request = _match_request(masked, start, end)
    if request is None:
        return None
    verb, lead_end = request
    object_start, clause_end = _object_bounds(masked, lead_end, end)
    object_end = _strip_trailing_courtesy(masked, object_start, clause_end)
    if object_end <= object_start:
        return None
    if not _OBJECT_OPENER.match(masked, object_start, object_end):
        return None
    if _CONDITIONAL.search(masked, object_start, object_end):
        return None
    if verb in _DELETE_VERBS and not _MEMORY_REFERENCE.search(text, object_start, clause_end):
        return None
    about = text[object_start:object_end]
    if not _names_speakers_fact(about):
        return None
    return " ".join(about.split())


def _object_bounds(masked: str, lead_end: int, end: int) -> tuple[int, int]:
    """Start and clause end of the object that follows the request lead."""
    start = lead_end
    while start < end and masked[start].isspace():
        start += 1
    about = _LEADING_ABOUT.match(masked, start, end)
    if about is not None:
        start = about.end()
    clause_break = _CLAUSE_BREAK.search(masked, start, end)
    return start, clause_break.start() if clause_break else end


def _strip_trailing_courtesy(masked: str, start: int, end: int) -> int:
    """New end of the object once trailing punctuation and courtesy phrases are removed."""
    while True:
        while end > start and masked[end - 1] in _TRAILING_PUNCTUATION:
            end -= 1
        courtesy = _TRAILING_COURTESY.search(masked, max(start, end - _COURTESY_WINDOW), end)
        if courtesy is None:
            return end
        end = courtesy.start()


def _names_speakers_fact(about: str) -> bool:
    """The speaker is mentioned before the first comma and some word names a fact."""
    words = [word.lower().replace("\u2019", "'") for word in _WORD.findall(about)]
    head = [word.lower().replace("\u2019", "'") for word in _WORD.findall(about.split(",", 1)[0])]
    mentions_speaker = any(word in _FIRST_PERSON for word in head)
    has_content = any(word not in _NON_CONTENT for word in words)
    return mentions_speaker and has_content
