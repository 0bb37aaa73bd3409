"""Between mem0's shapes and Lethe's: whom a request is about, what a conversation stores,
and how a Lethe memory, its versions and a write's outcome read in mem0's terms.

Pure mapping; every rule about memories stays in the services the router calls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from app.compat.mem0.schemas import (
    Mem0Add,
    Mem0Event,
    Mem0History,
    Mem0Memory,
    Mem0Scope,
    Mem0Scored,
)
from app.core.schemas import NonBlank
from app.memories.models import Volatility
from app.memories.schemas import ForgetRequestHandled, MemoryPublic, VersionPublic
from app.memories.schemas import MemoryCreate as LetheCreate

AGENT_PREFIX = "agent:"
# Where a memory keeps the agent beside a user (mem0 keeps it in the same payload).
AGENT_KEY = "agent_id"
STORED_ROLE = "user"


def subject_of(scope: Mem0Scope) -> str:
    """The user is the subject; an agent alone is the subject `agent:<agent_id>`, apart from
    any user of the same name."""
    if scope.user_id is not None:
        return scope.user_id
    assert scope.agent_id is not None, "Mem0Scope requires one of the two"
    return AGENT_PREFIX + scope.agent_id


def agent_filter(scope: Mem0Scope) -> str | None:
    """The agent a user's memories are narrowed to, when a request names both."""
    return scope.agent_id if scope.user_id is not None else None


# Lethe's own rule for a memory's text (`NonBlank`), so that a message it would refuse is
# skipped like a blank one rather than failing the write it is turned into.
_TEXT = TypeAdapter(NonBlank)


def _stored_text(content: str) -> bool:
    try:
        _TEXT.validate_python(content)
    except ValidationError:
        return False
    return True


def writes(body: Mem0Add) -> list[LetheCreate]:
    """One Lethe write per user message, no extraction: the text as the user said it. A run's
    messages are the run's `working` memories (mem0's short-term memory): closing the run,
    or deleting its memories, evicts them."""
    subject = subject_of(body)
    metadata = dict(body.metadata or {})
    agent = agent_filter(body)
    if agent is not None:
        metadata[AGENT_KEY] = agent
    volatility = Volatility.working if body.run_id else Volatility.preferential
    return [LetheCreate(subject=subject, text=message.content, metadata=metadata,
                        session=body.run_id, volatility=volatility,
                        expires_at=body.expiration_date)
            for message in body.messages
            if message.role == STORED_ROLE and _stored_text(message.content)]


def added(memory: MemoryPublic) -> Mem0Event:
    return Mem0Event(id=memory.id, memory=memory.text, event="ADD")


def forgot(handled: ForgetRequestHandled) -> list[Mem0Event]:
    """What a forget request in the conversation removed, as mem0's events: a memory
    forgotten whole is DELETE, one that lost sentences is UPDATE; neither shows text."""
    retraction: Mapping[str, Any] = handled.effects.retraction or {}
    events = [Mem0Event(id=memory_id, memory=None, event="DELETE")
              for memory_id in retraction.get("forgotten", [])]
    events += [Mem0Event(id=struck["id"], memory=None, event="UPDATE")
               for struck in retraction.get("struck", [])]
    return events


def item(memory: MemoryPublic) -> Mem0Memory:
    metadata = {k: v for k, v in memory.metadata.items() if k != AGENT_KEY}
    agent = memory.metadata.get(AGENT_KEY)
    user = memory.subject
    if user.startswith(AGENT_PREFIX):
        user, agent = None, user.removeprefix(AGENT_PREFIX)  # type: ignore[assignment]
    return Mem0Memory(
        id=memory.id, memory=memory.text, hash=hashlib.md5(memory.text.encode()).hexdigest(),
        metadata=metadata or None, created_at=memory.created_at, updated_at=memory.updated_at,
        user_id=user, agent_id=agent if isinstance(agent, str) else None,
        run_id=memory.session,
    )


def scored(memory: MemoryPublic, score: float) -> Mem0Scored:
    return Mem0Scored(**item(memory).model_dump(), score=score)


def matches(memory: MemoryPublic, *, scope: Mem0Scope, filters: Mapping[str, Any]) -> bool:
    """A memory of the subject inside the request's agent, run and metadata filters
    (equality on each metadata key)."""
    agent = agent_filter(scope)
    if agent is not None and memory.metadata.get(AGENT_KEY) != agent:
        return False
    if scope.run_id is not None and memory.session != scope.run_id:
        return False
    return all(memory.metadata.get(key) == value for key, value in filters.items())


def kept_metadata(memory: MemoryPublic, new: Mapping[str, Any]) -> dict[str, Any]:
    """A PUT's metadata: the caller's, with the agent the memory belongs to kept."""
    kept = dict(new)
    if AGENT_KEY in memory.metadata:
        kept[AGENT_KEY] = memory.metadata[AGENT_KEY]
    return kept


def history(memory_id: Any, versions: Iterable[VersionPublic]) -> list[Mem0History]:
    """A memory's versions, oldest first, as mem0's history rows: the first an ADD, each
    later one an UPDATE from the text before it."""
    rows: list[Mem0History] = []
    previous: VersionPublic | None = None
    for version in versions:
        rows.append(Mem0History(
            id=version.id, memory_id=memory_id,
            old_memory=previous.text if previous else None, new_memory=version.text,
            event="UPDATE" if previous else "ADD",
            created_at=rows[0].created_at if rows else version.created_at,
            updated_at=version.created_at if previous else None,
            is_deleted=False, actor_id=None, role=STORED_ROLE if previous is None else None,
        ))
        previous = version
    return rows
