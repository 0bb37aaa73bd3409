"""Contradictions on write: the live memories of the subject a new memory likely contradicts.

A write finds its nearest live neighbours of the same subject (current versions, exact pgvector
cosine), asks the supersession rule about each, and marks those it contradicts `suspect`
with flag `contradicted` (docs/api.md, POST /v1/memories). The rule itself lives in
`app/text/supersession.py`; this module is the database around it.

An optional judge model decides the pairs the rule is unsure about. It is a network call, so
it runs before the write transaction opens (`judge_borderline`, in a short read transaction of
its own); the write then re-finds and locks the candidates and uses a judge's verdict only for
the exact version the judge read.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlmodel import Session

from app.core import uow
from app.memories import queries, store
from app.memories.lifecycle import doubt
from app.memories.models import LIVE_STATES, Memory
from app.tenant_settings import service as tenant_settings
from app.text import judge as judges
from app.text.supersession import Relation, Thresholds, Verdict, classify_similar

FLAG = "contradicted"
# The audit detail naming the memory whose write raised the flag (read back by lineage).
CONTRADICTED_BY = "contradicted_by"
# A new fact rarely contradicts more than one or two others; the nearest few are enough.
TOP_K = 5
LIVE = [state.value for state in LIVE_STATES]

# What a judge said about (memory, version): only that exact text is covered by it.
Judged = Mapping[tuple[uuid.UUID, uuid.UUID], Relation]


@dataclass(frozen=True)
class Candidate:
    id: uuid.UUID
    version_id: uuid.UUID
    similarity: float


def thresholds(session: Session, *, tenant_id: uuid.UUID) -> Thresholds:
    return Thresholds.of(tenant_settings.get(session, tenant_id=tenant_id).supersession)


def nearest(
    session: Session, *, tenant_id: uuid.UUID, subject: str, embedding: Sequence[float],
    exclude: Sequence[uuid.UUID], floor: float,
) -> list[Candidate]:
    """The live memories of ``subject`` nearest to ``embedding``, at ``floor`` cosine or more
    (an exact search: a correction always meets the facts it contradicts)."""
    rows = queries.nearest_live(session, tenant_id=tenant_id, subject=subject,
                                embedding=embedding, exclude=exclude, max_distance=1.0 - floor,
                                k=TOP_K)
    return [Candidate(*row) for row in rows]


def verdicts(
    session: Session, *, new_text: str, found: Sequence[Candidate], limits: Thresholds
) -> list[tuple[Candidate, str, Verdict]]:
    """The rule's verdict on each candidate, with the candidate's current text."""
    if not found:
        return []
    texts = queries.version_texts(session, [c.version_id for c in found])
    return [(c, texts[c.version_id], classify_similar(new_text, texts[c.version_id],
                                                      c.similarity, limits))
            for c in found if c.version_id in texts]


def flag(
    session: Session, *, memory_id: uuid.UUID, new_text: str, found: Sequence[Candidate],
    rows: Mapping[uuid.UUID, Memory], limits: Thresholds, judged: Judged, actor: str,
) -> list[uuid.UUID]:
    """Mark every candidate the new memory contradicts; the rows are locked by the caller.

    A candidate that changed between the search and its lock (another version, no longer
    live) is left alone: the verdict was about a text it no longer holds.
    """
    current = [c for c in found if (row := rows.get(c.id)) is not None
               and row.state in LIVE and row.current_version_id == c.version_id]
    suspected: list[uuid.UUID] = []
    for candidate, _, verdict in verdicts(session, new_text=new_text, found=current,
                                          limits=limits):
        relation, why = verdict.relation, verdict.why
        if not verdict.sure and (candidate.id, candidate.version_id) in judged:
            relation, why = judged[(candidate.id, candidate.version_id)], "judge"
        if relation is Relation.contradiction and doubt(
            session, rows[candidate.id], FLAG, reason=f"contradicted by {memory_id} ({why})",
            actor=actor, details={CONTRADICTED_BY: str(memory_id)},
        ):
            suspected.append(candidate.id)
    return suspected


def judge_borderline(
    *, tenant_id: uuid.UUID, subject: str, key: str | None, supersedes: Sequence[uuid.UUID],
    new_text: str, embedding: Sequence[float],
) -> dict[tuple[uuid.UUID, uuid.UUID], Relation]:
    """Ask the configured judge about the pairs the rule is unsure of; {} without a judge.

    Call it before the write transaction opens: the candidates are read in a short
    transaction of their own, and the judge is asked after it has ended.
    """
    judge = judges.configured()
    if judge is None:
        return {}
    with uow.unit_of_work(tenant_id) as read:
        limits = thresholds(read, tenant_id=tenant_id)
        excluded = [*supersedes, *_slot_holder(read, tenant_id=tenant_id, subject=subject,
                                                key=key)]
        found = nearest(read, tenant_id=tenant_id, subject=subject, embedding=embedding,
                        exclude=excluded, floor=limits.change_word_min)
        judged = verdicts(read, new_text=new_text, found=found, limits=limits)
    unsure = [(c, old) for c, old, verdict in judged if not verdict.sure]
    answers: dict[tuple[uuid.UUID, uuid.UUID], Relation] = {}
    for candidate, old_text in unsure[: judge.max_pairs]:
        relation = judge.decide(old=old_text, new=new_text)
        if relation is not None:  # no answer: the deterministic verdict stands
            answers[(candidate.id, candidate.version_id)] = relation
    return answers


def _slot_holder(
    session: Session, *, tenant_id: uuid.UUID, subject: str, key: str | None
) -> list[uuid.UUID]:
    """The memory a keyed write would add a version to: never a contradiction of itself."""
    holder = None if key is None else store.slot_holder(session, tenant_id=tenant_id,
                                                         subject=subject, key=key)
    return [] if holder is None else [holder]
