"""Memories: the logical fact, its append-only versions, and provenance edges."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    FetchedValue,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    literal_column,
)
from sqlalchemy import (
    text as sa_text,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlmodel import Field, SQLModel

from app.core.models import timestamp_field

EMBEDDING_DIMENSIONS = 384
# A version's vector as the HNSW index holds it: its unit vector and a 16-coordinate code of
# its tenant and subject (`route`), ordered by L2 distance (migration 0014). Within a subject
# that order is the cosine order.
ROUTE_DIMENSIONS = 16
ROUTED_INDEX = "ix_memory_version_routed"
ROUTED_VECTOR = (
    f"(lethe_routed({{embedding}}, {{route}})::vector({EMBEDDING_DIMENSIONS + ROUTE_DIMENSIONS}))")


class Volatility(enum.StrEnum):
    structural = "structural"
    preferential = "preferential"
    procedural = "procedural"
    situational = "situational"
    # An agent's scratch memory: a half-life in seconds (`half_lives.working_seconds`).
    working = "working"


class MemoryState(enum.StrEnum):
    active = "active"
    suspect = "suspect"
    deprecated = "deprecated"
    quarantined = "quarantined"
    forgotten = "forgotten"


LIVE_STATES = (MemoryState.active, MemoryState.suspect)


class Memory(SQLModel, table=True):
    __tablename__ = "memory"
    __table_args__ = (
        CheckConstraint(
            "volatility IN ('structural', 'preferential', 'procedural', 'situational',"
            " 'working')",
            name="volatility",
        ),
        CheckConstraint(
            "state IN ('active', 'suspect', 'deprecated', 'quarantined', 'forgotten')",
            name="state",
        ),
        CheckConstraint("revision >= 1", name="revision"),
        Index("ix_memory_tenant_id_subject_state", "tenant_id", "subject", "state"),
        Index("ix_memory_tenant_id_created_at_id", "tenant_id", "created_at", "id"),
        # A large subject's memories changed since the lists index was built (migration 0012).
        Index("ix_memory_tenant_id_subject_updated_at", "tenant_id", "subject", "updated_at"),
        Index("ix_memory_superseded_by", "superseded_by"),
        # A session's memories, found when it closes (migration 0024).
        Index("ix_memory_tenant_id_session", "tenant_id", "session",
              postgresql_where=sa_text("session IS NOT NULL")),
        # From a version an HNSW walk found to the memory it is current for (large subjects).
        Index("ix_memory_current_version_id", "current_version_id"),
        # Retention finds memories by how long they have been in their state.
        Index("ix_memory_tenant_id_state_state_changed_at",
              "tenant_id", "state", "state_changed_at"),
        # Live memories that will expire, found by the expiry job (migration 0029).
        Index("ix_memory_tenant_id_expires_at", "tenant_id", "expires_at",
              postgresql_where=sa_text(
                  "expires_at IS NOT NULL AND state IN ('active', 'suspect')")),
        # One live memory per (subject, key) slot.
        Index(
            "uq_memory_live_slot", "tenant_id", "subject", "key", unique=True,
            postgresql_where=sa_text("key IS NOT NULL AND state IN ('active', 'suspect')"),
        ),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    subject: str = Field(sa_column=Column(String(255), nullable=False))
    key: str | None = Field(default=None, sa_column=Column(String(255)))
    volatility: str = Field(sa_column=Column(String(20), nullable=False))
    state: str = Field(
        default=MemoryState.active.value, sa_column=Column(String(20), nullable=False)
    )
    revision: int = Field(default=1, sa_column=Column(Integer, nullable=False))
    # One pointer read answers "what is current?" (invariant 2); the FK closes a cycle with
    # memory_version, so it is added after both tables exist.
    current_version_id: uuid.UUID | None = Field(
        default=None,
        sa_column=Column(
            ForeignKey("memory_version.id", use_alter=True, name="fk_memory_current_version_id"),
        ),
    )
    source: str | None = Field(default=None, sa_column=Column(String(255)))
    # `subject` and `source` are keyed digests (app/keys/digests.py); the strings, for showing,
    # are these copies sealed under the subject's data key (app/memories/sealing.py). An
    # erasure empties them with the key gone.
    sealed_subject: bytes = Field(
        default=b"", sa_column=Column(LargeBinary, nullable=False, server_default=sa_text("''")),
    )
    sealed_source: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    # The agent run that wrote it; closing the run evicts its working memories.
    session: str | None = Field(default=None, sa_column=Column(String(255)))
    depends_on: dict[str, Any] = Field(
        default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default="{}")
    )
    # The API's `metadata` as JSON sealed under the subject's data key (app/memories/sealing.py);
    # none: no bytes.
    sealed_metadata: bytes = Field(
        default=b"", sa_column=Column(LargeBinary, nullable=False, server_default=sa_text("''")),
    )
    superseded_by: uuid.UUID | None = Field(
        default=None,
        sa_column=Column(ForeignKey("memory.id", deferrable=True, initially="DEFERRED")),
    )
    flags: list[str] = Field(
        default_factory=list, sa_column=Column(JSONB, nullable=False, server_default="[]")
    )
    created_at: datetime = timestamp_field()
    updated_at: datetime = timestamp_field()
    last_validated_at: datetime = timestamp_field()
    # When the memory entered its current state (set only by `transitions.transition`);
    # `updated_at` is no substitute, since an edit of a deprecated memory moves it.
    state_changed_at: datetime = timestamp_field()
    # When what it says was said or observed (a conversation turn's time); the write time
    # unless the write names it.
    observed_at: datetime = timestamp_field()
    # When what it says stops being true: from that instant recall and live listings leave
    # it out; the expiry job then deprecates it (flag `expired`). None: it does not expire.
    expires_at: datetime | None = timestamp_field(nullable=True)


class MemoryVersion(SQLModel, table=True):
    __tablename__ = "memory_version"
    __table_args__ = (
        UniqueConstraint("memory_id", "seq"),
        # Each vector beside a code of its subject (migration 0014), so a walk of the graph
        # filtered to one subject starts among that subject's versions.
        Index(ROUTED_INDEX,
              literal_column(ROUTED_VECTOR.format(embedding="embedding", route="route"))
              .label("routed"),
              postgresql_using="hnsw", postgresql_ops={"routed": "vector_l2_ops"}),
        Index("ix_memory_version_search", "search", postgresql_using="gin"),
        Index("ix_memory_version_tenant_id", "tenant_id"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    memory_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("memory.id", ondelete="CASCADE"), nullable=False)
    )
    seq: int = Field(sa_column=Column(Integer, nullable=False))
    # The text sealed under the subject's data key (app/memories/sealing.py); a purged
    # version's is no bytes.
    sealed_text: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    embedding: Any = Field(
        default=None, sa_column=Column(Vector(EMBEDDING_DIMENSIONS), nullable=True)
    )
    # The text's english lexemes as keyed hashes under the subject's data key, with their
    # positions (app/memories/search_terms.py); written with the text, by the store alone, so
    # a redacted or purged text never leaves stale terms.
    search: str = Field(
        default="",
        sa_column=Column(TSVECTOR, nullable=False, server_default=sa_text("''::tsvector")),
    )
    operation_id: uuid.UUID | None = Field(default=None)
    # Set by a trigger from the memory's tenant and subject (`lethe_subject_route`), whatever
    # an insert says, so it is never written here.
    route: int | None = Field(
        default=None, sa_column=Column(BigInteger, server_default=FetchedValue(), nullable=False)
    )
    created_at: datetime = timestamp_field()


class ProvenanceEdge(SQLModel, table=True):
    """Derived thing (child) ← what it was derived from (parent)."""

    __tablename__ = "provenance_edge"
    __table_args__ = (
        CheckConstraint("parent_kind IN ('source', 'memory')", name="parent_kind"),
        Index("ix_provenance_edge_tenant_id_child_id", "tenant_id", "child_id"),
        Index("ix_provenance_edge_tenant_id_parent_kind_parent_ref",
              "tenant_id", "parent_kind", "parent_ref"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    tenant_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("tenant.id", ondelete="CASCADE"), nullable=False)
    )
    child_kind: str = Field(sa_column=Column(String(20), nullable=False))
    child_id: uuid.UUID = Field(nullable=False)
    parent_kind: str = Field(sa_column=Column(String(20), nullable=False))
    parent_ref: str = Field(sa_column=Column(String(255), nullable=False))
    created_at: datetime = timestamp_field()


class SubjectText(SQLModel, table=True):
    """A subject's live memories and their summed length in terms, for BM25 (migration 0021
    keeps it by triggers; nothing else writes it)."""

    __tablename__ = "subject_text"

    tenant_id: uuid.UUID = Field(primary_key=True)
    subject: str = Field(sa_column=Column(String(255), primary_key=True))
    memories: int = Field(sa_column=Column(BigInteger, nullable=False))
    length: int = Field(sa_column=Column(BigInteger, nullable=False))


class SubjectTerm(SQLModel, table=True):
    """How many of a subject's live memories hold a term (a lexeme of their current version),
    for BM25; a term none holds has no row (migration 0021)."""

    __tablename__ = "subject_term"

    tenant_id: uuid.UUID = Field(primary_key=True)
    subject: str = Field(sa_column=Column(String(255), primary_key=True))
    term: str = Field(sa_column=Column(Text, primary_key=True))
    memories: int = Field(sa_column=Column(BigInteger, nullable=False))
