"""The one rule for "what does a new statement do to an older one of the same subject?".

Three answers: it **restates** it (the same fact again), **contradicts** it (the old one is no
longer true), or is **unrelated** (both can be true). Write-time contradiction detection
(`app/memories/contradictions.py`) and consolidation (`app/forgetting/consolidation.py`) both
ask this module, so a pair is never a duplicate for one and a conflict for the other.

Cosine bands (`Thresholds`, which a tenant's settings may change) decide how much lexical
evidence is needed; the evidence comes from `app/text/statements.py`:

- below ``change_word_min``: unrelated, whatever the words;
- a different holder ("my sister …" / "my brother …", "Ana …" / "Tom …"): unrelated;
- a flipped negation over the same words, at ``contradiction_min`` or more: contradiction;
- a change word in the new text only ("moved", "now", "no longer", "sold"): contradiction
  when the new text says something the old did not (or the word itself ends the old state)
  and the pair is related: at ``contradiction_min`` or more, or a changed value, or a shared
  specific word;
- a changed value (number, name, code) in the same frame at ``contradiction_min`` or more:
  contradiction, unless the predicate holds many values at once ("allergic to", "visited");
- at ``restatement_min`` or more with none of the above: restatement (unsure when each text
  has a content word the other lacks: "frontend team" / "backend team");
- at ``contradiction_min`` or more, the same values and nothing above: restatement.

Everything else is unrelated. Verdicts carry ``sure``: an unsure one (similar, but the words
decide nothing) is what an optional judge model may overrule (`app/text/judge.py`).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from app.text import claims
from app.text.lexicon import RELATIONS, same_word, stem, words_of
from app.text.statements import Statement, parse, speaks_of


class Relation(enum.StrEnum):
    restatement = "restatement"
    contradiction = "contradiction"
    unrelated = "unrelated"


class Bands(Protocol):
    """The cosine bands as a tenant's settings name them (their ``supersession`` part)."""

    @property
    def change_word_min_similarity(self) -> float: ...
    @property
    def contradiction_min_similarity(self) -> float: ...
    @property
    def restatement_min_similarity(self) -> float: ...


@dataclass(frozen=True)
class Thresholds:
    """The cosine bands; the defaults are every tenant's until it changes them."""

    change_word_min: float = 0.4
    contradiction_min: float = 0.6
    restatement_min: float = 0.9

    @classmethod
    def of(cls, bands: Bands) -> Thresholds:
        return cls(change_word_min=bands.change_word_min_similarity,
                   contradiction_min=bands.contradiction_min_similarity,
                   restatement_min=bands.restatement_min_similarity)


DEFAULT = Thresholds()


@dataclass(frozen=True)
class Verdict:
    relation: Relation
    sure: bool
    why: str  # a short, content-free reason code, fit for an audit record
    similarity: float


# Predicates that hold several values at once: a second allergy is not a changed allergy.
SET_VALUED = words_of("""
allergic allergy afraid scared fear phobia like love enjoy visit travel play speak collect
read watch listen know meet own buy learn study support follow use eat drink
""")
# Too common among one person's facts to show that two of them are about the same thing.
WEAK = words_of("""
like love enjoy hate prefer want need use make live work feel think take keep buy have get go
say tell know see look try start begin let put give find call name time day year week month
""")


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def classify(
    new_text: str, new_embedding: Sequence[float], old_text: str,
    old_embedding: Sequence[float], thresholds: Thresholds = DEFAULT,
) -> Verdict:
    """What ``new_text`` does to ``old_text`` (same subject), from texts and embeddings."""
    return classify_similar(new_text, old_text, cosine(new_embedding, old_embedding), thresholds)


def classify_similar(
    new_text: str, old_text: str, similarity: float, thresholds: Thresholds = DEFAULT
) -> Verdict:
    """As `classify`, with the cosine similarity already known (e.g. from pgvector)."""
    t = thresholds

    def verdict(relation: Relation, why: str, sure: bool = True) -> Verdict:
        return Verdict(relation, sure, why, similarity)

    if similarity < t.change_word_min:
        return verdict(Relation.unrelated, "dissimilar")
    new_said, old_said = claims.read(new_text), claims.read(old_text)
    if _value_updated(new_said, old_said):
        return verdict(Relation.contradiction, "value-updated")
    if new_said.long or old_said.long:
        # A long message: its words as a whole say nothing about any one fact in it.
        return verdict(Relation.unrelated, "long-turn", sure=similarity < t.contradiction_min)
    found = _statements(new_text, old_text, similarity, t)
    if found.relation is not Relation.contradiction:
        return found
    if not new_said.stated or not old_said.stated:
        # A question, a greeting, thanks or praise states nothing to contradict.
        return verdict(Relation.unrelated, "no-fact")
    return _statements(new_said.stated, old_said.stated, similarity, t)


def _statements(new_text: str, old_text: str, similarity: float, t: Thresholds) -> Verdict:
    """The statement rule: two short statements compared as wholes."""

    def verdict(relation: Relation, why: str, sure: bool = True) -> Verdict:
        return Verdict(relation, sure, why, similarity)

    new, old = parse(new_text), parse(old_text)
    if _other_holder(new, old):
        return verdict(Relation.unrelated, "other-holder")
    conflict = _value_conflict(new, old)
    related = similarity >= t.contradiction_min
    if new.negated != old.negated and related and _overlap(new, old) >= 0.5:
        return verdict(Relation.contradiction, "negated")
    if new.additive and not old.additive:
        return verdict(Relation.unrelated, "added", sure=not related)
    if _changed(new, old) and (related or conflict or _shared_specific(new, old)):
        return verdict(Relation.contradiction, "changed")
    if conflict and related:
        if _same_frame(new, old) and not _set_valued(new, old):
            return verdict(Relation.contradiction, "value-changed")
        return verdict(Relation.unrelated, "other-value", sure=False)
    if similarity >= t.restatement_min:
        if _reworded(new, old):
            # "I work on the frontend team" / "… backend team" is as close as a paraphrase.
            return verdict(Relation.restatement, "reworded", sure=False)
        return verdict(Relation.restatement, "same-facts")
    if related and _same_values(new, old):
        return verdict(Relation.restatement, "same-values")
    return verdict(Relation.unrelated, "similar" if related else "loosely-similar",
                   sure=not related)


def _changed(new: Statement, old: Statement) -> bool:
    """A change word the old text lacks, about the same subject.

    A word ending the old state ("sold", "passed away") may speak of anything the old text
    mentions ("I have a cat named Luna" / "my cat Luna passed away"); a word announcing a new
    state must come with something new and the same subject: "my kids moved to a new school"
    changes nothing about "I have two kids".
    """
    if new.ending - old.ending:
        return speaks_of(new, old.subject) and speaks_of(old, new.subject)
    return bool(new.changing - old.changing) and new.subject == old.subject and _novel(new, old)


def _other_holder(a: Statement, b: Statement) -> bool:
    """About someone else: a relation one text names and the other never mentions, or two
    different names leading the sentences."""
    if a.lead and b.lead and a.lead != b.lead:
        return True
    return any(not b.mentions(h) for h in a.holders) or any(not a.mentions(h) for h in b.holders)


def _only_in(a: frozenset[str], other: Statement) -> set[str]:
    return {value for value in a if not other.mentions(value)}


def _value_conflict(new: Statement, old: Statement) -> bool:
    """Each side names a value of one kind the other does not: 555-1234 / 555-9876."""
    return any(
        _only_in(mine, old) and _only_in(theirs, new)
        for mine, theirs in ((new.numbers, old.numbers), (new.names, old.names),
                             (new.codes, old.codes))
    )


def _covered(a: frozenset[str], b: frozenset[str]) -> int:
    return sum(1 for x in a if any(same_word(x, y) for y in b))


def _overlap(new: Statement, old: Statement) -> float:
    shared = _covered(new.content, old.content)
    union = len(new.content) + len(old.content) - shared
    return shared / union if union else 1.0


def _novel(new: Statement, old: Statement) -> bool:
    """The new text says something the old one did not."""
    return bool(_only_in(new.values, old) or _only_in(new.content, old))


def _shared_specific(new: Statement, old: Statement) -> bool:
    """A content word both use that is not common to every fact ("smoke", not "like").

    Names do not count: "I changed the tyres on my Corolla" shares one with "I drive a
    Toyota Corolla" and changes nothing about it.
    """
    specific = {w for w in new.content if not any(same_word(w, weak) for weak in WEAK)}
    return _covered(frozenset(specific), old.content) > 0


def _same_frame(new: Statement, old: Statement) -> bool:
    """Apart from the values, the same words: the same attribute with another value."""
    return not _only_in(new.content, old) and not _only_in(old.content, new)


def _set_valued(new: Statement, old: Statement) -> bool:
    # A leading word counts too: "Love sushi." is about a set of things loved.
    frame = new.content | old.content | {stem(w) for w in (new.lead, old.lead) if w}
    if any(same_word(word, "favorite") for word in frame):
        return False
    return any(same_word(word, predicate) for word in frame for predicate in SET_VALUED)


def _same_values(new: Statement, old: Statement) -> bool:
    """Both name the same values (555-1234 / "reach me at 555-1234") and nothing else."""
    return bool(new.values) and not _only_in(new.values, old) and not _only_in(old.values, new)


def _reworded(new: Statement, old: Statement) -> bool:
    """Each side has a content word the other lacks."""
    return bool(_only_in(new.content, old)) and bool(_only_in(old.content, new))


# Context words two valued claims must share to be about the same attribute.
SHARED_CONTEXT = 2


def _value_updated(new: claims.Reading, old: claims.Reading) -> bool:
    """A value of the new message the old never names, beside the same attribute words as a
    value of the old message the new never names: "a $700 budget ceiling for the phone" /
    "raised my phone budget ceiling to $750"."""
    for mine in new.values:
        if not mine.cued or mine.token in old.tokens:
            continue
        for theirs in old.values:
            if theirs.kind != mine.kind or theirs.token in new.tokens:
                continue
            shared = {w for w in mine.context & theirs.context
                      if not any(same_word(w, weak) for weak in WEAK)}
            holders = {RELATIONS.get(w) for w in mine.context ^ theirs.context} - {None}
            if len(shared) >= SHARED_CONTEXT and not holders and mine.tight & theirs.tight:
                return True
    return False
