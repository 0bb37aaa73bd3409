"""What the API answers, as pydantic models (API.md; the served OpenAPI names each shape).

Models allow fields they do not declare: a server newer than this client adds fields, and
an older client must keep reading its answers. Enumerations are plain strings for the same
reason.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")


class Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class Page(Model, Generic[T]):
    """One page of a list: iterate a resource's `list` instead to walk every page."""

    data: list[T]
    next_cursor: str | None = None


class VersionRef(Model):
    id: UUID
    seq: int


class Memory(Model):
    id: UUID
    subject: str
    text: str
    revision: int
    version: VersionRef
    state: str
    volatility: str
    key: str | None = None
    source: str | None = None
    depends_on: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    superseded_by: UUID | None = None
    flags: list[str] = Field(default_factory=list)
    created_at: datetime
    updated_at: datetime
    last_validated_at: datetime
    observed_at: datetime
    session: str | None = None
    expires_at: datetime | None = None

    @property
    def etag(self) -> str:
        """The `If-Match` value that names this revision."""
        return f'"{self.revision}"'


class Effects(Model):
    superseded: list[UUID] = Field(default_factory=list)
    suspected: list[UUID] = Field(default_factory=list)
    retraction: dict[str, Any] | None = None


class MemoryWritten(Memory):
    """`POST /v1/memories`: the memory, what the write did to others, and whether the
    answer is a replay of an earlier call with the same Idempotency-Key."""

    effects: Effects = Field(default_factory=Effects)
    replayed: bool = False


class ForgetRequestHandled(Model):
    """`POST /v1/memories` whose text was a forget request: handled, not stored."""

    id: None = None
    stored: bool = False
    effects: Effects = Field(default_factory=Effects)
    replayed: bool = False


class Version(Model):
    id: UUID
    seq: int
    text: str
    created_at: datetime
    current: bool


class Edge(Model):
    kind: str
    ref: str
    created_at: datetime


class TrailEvent(Model):
    action: str
    actor: str
    created_at: datetime
    seq: int
    from_state: str | None = None
    to_state: str | None = None
    reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class Lineage(Model):
    id: UUID
    state: str
    versions: list[Version]
    superseded_by: UUID | None = None
    supersedes: list[UUID] = Field(default_factory=list)
    contradicted_by: UUID | None = None
    parents: list[Edge] = Field(default_factory=list)
    children: list[Edge] = Field(default_factory=list)
    audit_events: list[TrailEvent] = Field(default_factory=list)


class ForgetResult(Model):
    id: UUID
    forgotten: bool
    excluded_source: str | None = None
    retraction_id: UUID | None = None
    already_forgotten: bool = False


class Retraction(Model):
    id: UUID
    about: str | None = None
    created_at: datetime
    memory_count: int


class RecallResult(Model):
    memory: Memory
    score: float
    flags: list[str] = Field(default_factory=list)
    history: list[Memory] = Field(default_factory=list)


class RecallResponse(Model):
    results: list[RecallResult]
    retractions: list[Retraction] = Field(default_factory=list)


class Struck(Model):
    id: UUID
    sentences: int


class DescribeResult(Model):
    """`POST /v1/forget`: what a forget by description did (or, dry run, would do)."""

    retraction_id: UUID | None = None
    forgotten: list[UUID] = Field(default_factory=list)
    quarantined: list[UUID] = Field(default_factory=list)
    struck: list[Struck] = Field(default_factory=list)
    held: list[UUID] = Field(default_factory=list)
    unresolved: bool = False


class OperationAccepted(Model):
    """Every 202 of the API: poll `operations.get(operation_id)`."""

    operation_id: UUID
    kind: str
    status: str = "queued"


class Operation(Model):
    id: UUID
    kind: str
    status: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.status in ("succeeded", "failed")


class Settings(Model):
    """A tenant's settings; each group is the object API.md describes."""

    half_lives: dict[str, float]
    retention: dict[str, float]
    detect_forget_requests: bool
    supersession: dict[str, float]
    erasure: dict[str, Any]
    forget: dict[str, Any]
    retractions: dict[str, Any]
    limits: dict[str, Any]
    console: dict[str, Any] = Field(default_factory=dict)


class Exclusion(Model):
    id: UUID
    source: str | None = None
    source_digest: str
    reason: str | None = None
    created_at: datetime


class Dependency(Model):
    key: str
    value: str
    updated_at: datetime


class DependencyChanged(Model):
    key: str
    value: str
    changed: bool
    invalidation: OperationAccepted | None = None


class AuditEvent(Model):
    seq: int
    action: str
    actor: str
    target_kind: str
    target_id: str | None = None
    from_state: str | None = None
    to_state: str | None = None
    reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    hash: str
    prev_hash: str


class AuditVerification(Model):
    ok: bool
    events: int
    head: str | None = None
    first_bad_seq: int | None = None


class Progress(Model):
    done: int
    total: int


class Receipt(Model):
    """A signed erasure receipt; verify it offline with `lethe receipts verify`."""

    request_id: str
    tenant_id: str
    subject_digest: str
    status: str
    requested_at: str
    completed_at: str | None = None
    vacuumed_at: str | None = None
    counts: dict[str, int]
    tombstoned: list[str]
    held: list[dict[str, Any]]
    artifacts: list[dict[str, Any]]
    key_id: str
    signature: str


class ErasureFiled(Model):
    id: UUID
    subject: str | None = None
    status: str
    due_at: datetime
    created_at: datetime


class ErasureRequest(Model):
    id: UUID
    status: str
    subject: str | None = None
    subject_digest: str
    reason: str | None = None
    requested_by: str | None = None
    due_at: datetime
    overdue: bool = False
    created_at: datetime
    approved_at: datetime | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    cancelled_at: datetime | None = None
    vacuumed_at: datetime | None = None
    progress: Progress
    receipt: Receipt | None = None
    error: str | None = None


class AccessExport(Model):
    """The access-request export: everything held about one subject."""

    request_id: UUID
    tenant_id: UUID
    subject: str
    generated_at: datetime
    format: str | None = None
    counts: dict[str, int]
    memories: list[dict[str, Any]]
    forgotten: list[dict[str, Any]]
    retractions: list[dict[str, Any]]
    source_exclusions: list[dict[str, Any]]
    audit_events: list[dict[str, Any]]


class LegalHold(Model):
    id: UUID
    scope: dict[str, Any]
    reason: str
    case_ref: str | None = None
    created_at: datetime
    created_by: str
    released_at: datetime | None = None
    released_by: str | None = None
    held_count: int | None = None


class Artifact(Model):
    id: UUID
    kind: str
    ref: str
    derived_from: list[UUID]
    status: str
    created_at: datetime
    erase_requested_at: datetime | None = None
    acknowledged_at: datetime | None = None


class Webhook(Model):
    id: UUID
    url: str
    events: list[str]
    created_at: datetime


class WebhookCreated(Webhook):
    secret: str | None = None


class Delivery(Model):
    id: UUID
    event: str
    status: str
    attempts: int
    created_at: datetime
    delivered_at: datetime | None = None
    last_attempt_at: datetime | None = None
    last_error: str | None = None
    last_status_code: int | None = None
    next_attempt_at: datetime | None = None


class ApiKey(Model):
    id: UUID
    role: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None = None


class ApiKeyCreated(ApiKey):
    key: str | None = None


class StaffMember(Model):
    id: UUID
    email: str
    role: str
    created_at: datetime


class StaffCreated(StaffMember):
    password: str | None = None


class TenantKeys(Model):
    app: str
    compliance: str


class TenantCreated(Model):
    id: UUID
    name: str
    api_keys: TenantKeys | None = None


class PublicKey(Model):
    """The receipt key as an OKP JWK."""

    kid: str
    x: str
    kty: str = "OKP"
    crv: str = "Ed25519"
    alg: str | None = None
    use: str | None = None
