"""Forget by description: "forget that I collect sneakers" resolved to memories and sentences.

Three phases, because embedding must never hold a transaction open:

1. plan, in a short read transaction of its own: the store's hybrid search finds candidates,
   a word gate keeps those whose current text shares a content stem with the description,
   and each target is judged *mostly about it* (forgotten whole) or *mentioning it* (the
   mentioning sentences are struck);
2. embed the struck memories' new texts, outside any transaction;
3. apply, in the caller's work transaction: every target is locked and re-checked against the
   revision it was planned at; a target that moved meanwhile is reported in ``skipped``,
   never silently dropped, and never acted on from a stale plan. A target a legal hold
   covers is reported in ``held`` and left as it is when acting on it would destroy content
   (forgotten whole, or struck); quarantining it (``delete`` false) destroys nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sqlmodel import Session

from app.core import db, uow
from app.forgetting import retractions
from app.forgetting import topics as sentence_rules
from app.forgetting.forget import after_forget, forget_one
from app.forgetting.schemas import DescribeResult, SkippedPublic, StruckPublic
from app.holds import service as holds
from app.keys import digests
from app.memories import queries, search_terms, store
from app.memories.lifecycle import Strike, destroy_content, transition
from app.memories.models import LIVE_STATES, Memory, MemoryState
from app.recall import candidates
from app.recall.ranking import reciprocal_rank_fusion
from app.sources import service as sources

REASON = "forget-by-description"
CHANGED = "changed while forgetting; retry"
CANDIDATES_PER_TARGET = 4
# Deprecated memories are resolvable too: recall shows them as `history` beside their
# replacement, so an old fact left there would still be served after "forget that …".
RESOLVABLE = [state.value for state in (*LIVE_STATES, MemoryState.deprecated)]

Embed = Callable[[Sequence[str]], list[list[float]]]


@dataclass(frozen=True)
class Struck:
    id: uuid.UUID
    sentences: int


@dataclass(frozen=True)
class Skipped:
    id: uuid.UUID
    why: str


@dataclass(frozen=True)
class DescribeOutcome:
    retraction_id: uuid.UUID | None
    forgotten: list[uuid.UUID] = field(default_factory=list)
    quarantined: list[uuid.UUID] = field(default_factory=list)
    struck: list[Struck] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    held: list[uuid.UUID] = field(default_factory=list)  # kept by a legal hold, untouched

    @property
    def unresolved(self) -> bool:
        """Nothing was (or, for a dry run, would be) forgotten, quarantined or struck, and no
        legal hold kept a memory the description named."""
        return not (self.forgotten or self.quarantined or self.struck or self.held)

    @property
    def memory_ids(self) -> list[uuid.UUID]:
        return [*self.forgotten, *self.quarantined, *(s.id for s in self.struck)]


@dataclass
class _Target:
    id: uuid.UUID
    revision: int
    whole: bool
    new_text: str = ""
    struck_sentences: int = 0
    # Older versions that carried a mentioning sentence: version id → text without them.
    redacted: dict[uuid.UUID, str] = field(default_factory=dict)
    embedding: list[float] | None = None


@dataclass(frozen=True)
class Plan:
    """A forget by description, planned and embedded: what `apply` does in a transaction."""

    tenant_id: uuid.UUID
    subject: str
    about: str
    delete: bool
    exclude_source: bool
    dry_run: bool
    actor: str
    targets: list[_Target]


def prepare(
    *,
    tenant_id: uuid.UUID,
    subject: str,
    about: str,
    delete: bool,
    exclude_source: bool,
    dry_run: bool,
    max_targets: int,
    actor: str,
    embed: Embed,
) -> Plan:
    """Phases 1 and 2: plan what ``about`` describes among ``subject``'s live memories and
    embed the struck texts, before the caller's transaction opens."""
    [about_embedding] = embed([about])
    subject = digests.subject_digest(tenant_id, subject)  # as memories store it, from here on
    with uow.unit_of_work(tenant_id) as read:
        targets = _plan(read, tenant_id=tenant_id, subject=subject, about=about,
                        embedding=about_embedding, max_targets=max_targets, redact=delete)
    if not dry_run:
        strikes = [target for target in targets if not target.whole]
        vectors = embed([target.new_text for target in strikes]) if strikes else []
        for target, vector in zip(strikes, vectors, strict=True):
            target.embedding = vector
    return Plan(tenant_id=tenant_id, subject=subject, about=about, delete=delete,
                exclude_source=exclude_source, dry_run=dry_run, actor=actor, targets=targets)


def apply(session: Session, plan: Plan) -> DescribeOutcome:
    """Phase 3, in the caller's transaction; a dry run changes nothing and says what would."""
    if plan.dry_run:
        held = holds.covering(session, tenant_id=plan.tenant_id,
                              memory_ids=[target.id for target in plan.targets])
        return _predicted(plan.targets, delete=plan.delete, held=held)
    return _apply(session, plan.targets, tenant_id=plan.tenant_id, subject=plan.subject,
                  about=plan.about, delete=plan.delete, exclude_source=plan.exclude_source,
                  actor=plan.actor)


def public(outcome: DescribeOutcome) -> DescribeResult:
    """The API's answer for an outcome (also what a detected forget request reports)."""
    return DescribeResult(
        retraction_id=outcome.retraction_id, forgotten=outcome.forgotten,
        quarantined=outcome.quarantined,
        struck=[StruckPublic(id=s.id, sentences=s.sentences) for s in outcome.struck],
        unresolved=outcome.unresolved,
        skipped=[SkippedPublic(id=s.id, why=s.why) for s in outcome.skipped],
        held=outcome.held,
    )


# ---------------------------------------------------------------------------------------------
# Phase 1: plan (read only).
# ---------------------------------------------------------------------------------------------


def _plan(
    session: Session, *, tenant_id: uuid.UUID, subject: str, about: str,
    embedding: Sequence[float], max_targets: int, redact: bool,
) -> list[_Target]:
    topic = sentence_rules.topic(session, about)
    if not topic.stems:
        return []  # "forget what I said": names nothing, so nothing can be resolved
    ranked = _candidates(session, tenant_id=tenant_id, subject=subject, topic=topic,
                         embedding=embedding,
                         n=max_targets * CANDIDATES_PER_TARGET)
    rows = queries.with_current_texts(session, tenant_id=tenant_id, ids=ranked,
                                      states=RESOLVABLE)
    texts = [rows[memory_id][1] for memory_id in ranked if memory_id in rows]
    judged = sentence_rules.mentions(session, topic, texts)
    targets: list[_Target] = []
    for memory, text in (rows[memory_id] for memory_id in ranked if memory_id in rows):
        judgement = judged[text]
        if judgement.mentions == 0:
            continue  # the word gate: similar in meaning is not enough to forget
        targets.append(_Target(id=memory.id, revision=memory.revision,
                               whole=judgement.mostly_about, new_text=judgement.without,
                               struck_sentences=judgement.mentions))
        if len(targets) == max_targets:
            break
    if redact:
        _plan_redactions(session, topic, [t for t in targets if not t.whole])
    return targets


def _candidates(
    session: Session, *, tenant_id: uuid.UUID, subject: str, topic: sentence_rules.Topic,
    embedding: Sequence[float], n: int,
) -> list[uuid.UUID]:
    """The store's own hybrid search: vector and keyword candidates fused by rank. The vector
    list is exact: what a forget request misses stays remembered."""
    terms = search_terms.query_terms(db.driver_connection(session), tenant_id=tenant_id,
                                     subject=subject, query=topic.keywords)
    found = candidates.lists(session, subject=subject, states=RESOLVABLE, n=n,
                             embedding=embedding, terms=terms if topic.keywords else None,
                             exact=True, expired_too=True)
    return [memory_id for memory_id, _ in reciprocal_rank_fusion(found.ranked())]


def _plan_redactions(
    session: Session, topic: sentence_rules.Topic, strikes: Sequence[_Target]
) -> None:
    """For each struck memory, its other versions' texts without the mentioning sentences.

    Every mentioning sentence goes, not only the ones struck from the current text: an older
    wording of the same fact ("I collect sneakers!") is the same forgotten fact.
    """
    if not strikes:
        return
    by_memory = {target.id: target for target in strikes}
    versions = queries.versions_of(session, list(by_memory))
    judged = sentence_rules.mentions(session, topic, [v.text for v in versions])
    for version in versions:
        judgement = judged[version.text]
        if judgement.mentions:
            by_memory[version.memory_id].redacted[version.id] = judgement.without


def _destroys(target: _Target, *, delete: bool) -> bool:
    """Whether acting on ``target`` takes content (what a legal hold forbids): a whole
    forget or a strike; an archive quarantine takes none."""
    return delete or not target.whole


def _predicted(
    targets: Sequence[_Target], *, delete: bool, held: Mapping[uuid.UUID, uuid.UUID]
) -> DescribeOutcome:
    kept = {t.id for t in targets if t.id in held and _destroys(t, delete=delete)}
    free = [target for target in targets if target.id not in kept]
    whole = [target.id for target in free if target.whole]
    return DescribeOutcome(
        retraction_id=None,
        forgotten=whole if delete else [],
        quarantined=[] if delete else whole,
        struck=[Struck(t.id, t.struck_sentences) for t in free if not t.whole],
        held=[target.id for target in targets if target.id in kept],
    )


# ---------------------------------------------------------------------------------------------
# Phase 3: apply (the work transaction).
# ---------------------------------------------------------------------------------------------


def _apply(
    session: Session, targets: Sequence[_Target], *, tenant_id: uuid.UUID, subject: str,
    about: str, delete: bool, exclude_source: bool, actor: str,
) -> DescribeOutcome:
    # Every row lock first, in one ordered statement (no deadlock between two forgets), and
    # only then audit appends, which hold the tenant's chain lock until commit.
    locked = store.lock(session, tenant_id=tenant_id, ids=[t.id for t in targets])
    # Held targets are left out here, all in one statement; `destroy_content` would refuse
    # them one by one and fail the whole forget.
    held = holds.covering(session, tenant_id=tenant_id, memory_ids=list(locked))
    outcome = DescribeOutcome(retraction_id=None)
    for target in targets:
        memory = locked.get(target.id)
        if memory is None or memory.revision != target.revision or memory.state not in RESOLVABLE:
            outcome.skipped.append(Skipped(target.id, CHANGED))
            continue
        if memory.id in held and _destroys(target, delete=delete):
            outcome.held.append(memory.id)
            continue
        if target.whole and delete:
            forget_one(session, memory, reason=REASON, actor=actor)
            outcome.forgotten.append(memory.id)
        elif target.whole:
            transition(session, memory, MemoryState.quarantined, reason=REASON, actor=actor)
            outcome.quarantined.append(memory.id)
        else:
            _strike(session, memory, target, delete=delete, actor=actor)
            outcome.struck.append(Struck(memory.id, target.struck_sentences))
        if exclude_source and memory.source is not None:
            sources.exclude(session, tenant_id=tenant_id,
                            source=queries.source_of(memory) or memory.source, reason=REASON,
                            actor=actor)
    after_forget(session, tenant_id=tenant_id, memory_ids=outcome.forgotten, actor=actor)
    retraction = retractions.record(session, tenant_id=tenant_id, subject=subject, about=about,
                                    memory_ids=outcome.memory_ids)
    return DescribeOutcome(
        retraction_id=retraction.id, forgotten=outcome.forgotten,
        quarantined=outcome.quarantined, struck=outcome.struck, skipped=outcome.skipped,
        held=outcome.held,
    )


def _strike(
    session: Session, memory: Memory, target: _Target, *, delete: bool, actor: str
) -> None:
    """A new current version without the mentioning sentences; with ``delete`` older versions
    and stored answers lose them too (`destroy_content`)."""
    destroy_content(session, memory, reason=REASON, actor=actor, strike=Strike(
        text=target.new_text, embedding=target.embedding, sentences=target.struck_sentences,
        delete=delete, redacted=target.redacted,
    ))
