"""Appending to, reading and verifying a tenant's audit chain.

`record` is what every state transition and compliance action calls, inside the caller's
transaction: the event commits or rolls back with the change it describes.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, any_, bindparam, func, insert, text
from sqlalchemy import event as sa_event
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session as OrmSession
from sqlalchemy.orm import SessionTransaction
from sqlmodel import Session, col, select

from app.audit import chain, content
from app.audit.errors import InvalidCursor
from app.audit.models import AuditEvent
from app.audit.schemas import AuditEventPublic, AuditPage, TrailEvent, VerifyResult
from app.core.models import utcnow

if TYPE_CHECKING:
    from app.tenants.service import Principal

ADMIN = "admin"
VERIFY_BATCH = 1000
# A memory moves a handful of times in its life; a trail this long is already unusual, and the
# rest stays readable through `events`.
TRAIL_LIMIT = 200


def actor_for(principal: Principal) -> str:
    """The actor naming an API key."""
    return key_actor(principal.key_id)


def key_actor(key_id: uuid.UUID) -> str:
    """The actor naming the API key with this ID (e.g. the key that submitted a job)."""
    return f"key:{key_id}"


def staff_actor(staff_id: uuid.UUID) -> str:
    """The actor naming a console staff member (their row outlives their removal)."""
    return f"staff:{staff_id}"


def system_actor(job: str) -> str:
    """The actor naming a background job, e.g. ``system:retention``."""
    return f"system:{job}"


def record(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    actor: str,
    action: str,
    target_kind: str,
    target_id: str | uuid.UUID | None = None,
    from_state: str | None = None,
    to_state: str | None = None,
    reason: str | None = None,
    details: Mapping[str, Any] | None = None,
    flush: bool = True,
) -> AuditEvent:
    """Append one event to the tenant's chain (flushes, never commits).

    ``flush=False`` leaves the event pending for the session's next flush, so a job
    appending thousands writes them in a few multi-row statements; it stays in chain order.

    Raises ValueError for anything that could carry content: a reason over 500 characters, a
    details string over 200, or a malformed actor, action or target.

    The append holds a per-tenant advisory lock until the caller's transaction ends, so every
    other auditing transaction of the tenant waits for it: take row locks first and record
    last. Needs READ COMMITTED (the default): the head is read after the lock is granted.
    """
    fields = _checked(Entry(actor=actor, action=action, target_kind=target_kind,
                            target_id=None if target_id is None else str(target_id),
                            from_state=from_state, to_state=to_state, reason=reason,
                            details=details or {}))
    heads = session.info.setdefault(_HEADS, {})
    if tenant_id not in heads:
        _lock_chain(session, tenant_id)
        heads[tenant_id] = _head(session, tenant_id)
    seq, prev_hash = heads[tenant_id]
    event = AuditEvent(
        tenant_id=tenant_id, seq=seq + 1, prev_hash=prev_hash, created_at=utcnow(), hash="",
        **fields,
    )
    event.hash = chain.digest(event)
    session.add(event)
    if flush:
        session.flush()
    heads[tenant_id] = (event.seq, event.hash)
    return event


@dataclass(frozen=True)
class Entry:
    """One event for `record_many`: `record`'s arguments but the tenant."""

    actor: str
    action: str
    target_kind: str
    target_id: str | None = None
    from_state: str | None = None
    to_state: str | None = None
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


def record_many(session: Session, *, tenant_id: uuid.UUID, entries: Sequence[Entry]) -> int:
    """Append many events to the tenant's chain in one statement, in order; what `record`
    does for one, with the same checks and the same lock, without an ORM object per event
    (a batch of thousands of tombstones spent most of its time building those)."""
    if not entries:
        return 0
    session.flush()  # events pending in the session come first in the chain
    checked = [_checked(entry) for entry in entries]
    heads = session.info.setdefault(_HEADS, {})
    if tenant_id not in heads:
        _lock_chain(session, tenant_id)
        heads[tenant_id] = _head(session, tenant_id)
    seq, prev_hash = heads[tenant_id]
    now = utcnow()
    rows = []
    for fields in checked:
        seq += 1
        row = {"id": uuid.uuid4(), "tenant_id": tenant_id, "seq": seq, "prev_hash": prev_hash,
               "created_at": now, **fields}
        row["hash"] = prev_hash = chain.digest_of(row)
        rows.append(row)
    session.execute(insert(AuditEvent), rows)
    heads[tenant_id] = (seq, prev_hash)
    return len(rows)


def _checked(entry: Entry) -> dict[str, Any]:
    """An event's fields, refused (ValueError) when one could carry content."""
    return {
        "actor": content.check_token("actor", entry.actor, content.ACTOR, 100),
        "action": content.check_token("action", entry.action, content.ACTION, 64),
        "target_kind": content.check_token("target_kind", entry.target_kind, content.KIND, 32),
        "target_id": content.check_text("target_id", entry.target_id, content.TARGET_ID_MAX),
        "from_state": content.check_optional_token("from_state", entry.from_state,
                                                   content.STATE, 20),
        "to_state": content.check_optional_token("to_state", entry.to_state, content.STATE, 20),
        "reason": content.check_text("reason", entry.reason, content.REASON_MAX),
        "details": content.normalize_details(entry.details),
    }


# The chain head per tenant, known while this transaction holds the tenant's chain lock: no
# other transaction can append meanwhile, so a job appending thousands of events reads the
# head and takes the lock once instead of once per event. Forgotten when the transaction or
# a savepoint ends and on any rollback: a rolled-back savepoint takes its events (and the
# lock, if it was taken inside) with it. The subtransaction every flush opens does not count.
_HEADS = "lethe.audit_heads"


@sa_event.listens_for(OrmSession, "after_transaction_end")
def _forget_heads_at_end(session: OrmSession, transaction: SessionTransaction) -> None:
    if transaction.parent is None or transaction.nested:
        session.info.pop(_HEADS, None)


@sa_event.listens_for(OrmSession, "after_soft_rollback")
def _forget_heads_on_rollback(session: OrmSession, _previous: SessionTransaction) -> None:
    session.info.pop(_HEADS, None)


def _lock_chain(session: Session, tenant_id: uuid.UUID) -> None:
    # Serializes appends per tenant: two transactions reading the same head would fork the
    # chain (the unique (tenant_id, seq) would then refuse the second, as a last resort).
    session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended('audit:' || :tenant, 0))"),
        {"tenant": str(tenant_id)},
    )


def _head(session: Session, tenant_id: uuid.UUID) -> tuple[int, str]:
    """The last (seq, hash) of the chain; (0, 64 zeros) before the first event."""
    row = session.exec(
        select(AuditEvent.seq, AuditEvent.hash)
        .where(AuditEvent.tenant_id == tenant_id)
        .order_by(col(AuditEvent.seq).desc())
        .limit(1)
    ).first()
    return (0, chain.GENESIS) if row is None else (row[0], row[1])


def verify(session: Session, *, tenant_id: uuid.UUID, after: VerifyResult | None = None
           ) -> VerifyResult:
    """Recompute every hash of the tenant's chain and check its links and seq continuity.

    ``after``: an earlier intact result for this chain; only the events appended since are
    checked, linked to its head (seqs run 1…n without gaps, so its head is seq ``events``).
    """
    expected_seq, prev_hash, count, bad = 1, chain.GENESIS, 0, None
    head: str | None = None
    if after is not None and after.ok and after.head is not None:
        expected_seq, prev_hash = after.events + 1, after.head
        count, head = after.events, after.head
    for event in _in_order(session, tenant_id, after=expected_seq - 1):
        count += 1
        if bad is None:
            bad = _fault(event, expected_seq, prev_hash)
        expected_seq, prev_hash, head = event.seq + 1, event.hash, event.hash
    return VerifyResult(ok=bad is None, events=count, head=head, first_bad_seq=bad)


def _fault(event: AuditEvent, expected_seq: int, prev_hash: str) -> int | None:
    if event.seq != expected_seq:
        return expected_seq  # rows come in seq order, so this is the first missing seq
    if event.prev_hash != prev_hash or chain.digest(event) != event.hash:
        return event.seq
    return None


def _in_order(session: Session, tenant_id: uuid.UUID, *, after: int = 0
              ) -> Iterator[AuditEvent]:
    while True:
        batch = list(session.exec(
            select(AuditEvent)
            .where(AuditEvent.tenant_id == tenant_id, col(AuditEvent.seq) > after)
            .order_by(col(AuditEvent.seq))
            .limit(VERIFY_BATCH)
            # Verify what the database holds, not objects this session already knows.
            .execution_options(populate_existing=True)
        ))
        yield from batch
        if len(batch) < VERIFY_BATCH:
            return
        after = batch[-1].seq


def events(
    session: Session,
    *,
    tenant_id: uuid.UUID,
    target_id: str | None = None,
    action: str | None = None,
    actor: str | None = None,
    since: datetime | None = None,
    limit: int = 50,
    cursor: str | None = None,
    filters: EventFilters | None = None,
    newest_first: bool = False,
) -> AuditPage:
    """The tenant's events oldest first (``newest_first``: the reverse), optionally only those
    about ``target_id``, of ``action``, by ``actor``, at or after ``since``, and matching
    ``filters``. The cursor names the last seq shown; the next page goes on past it in the
    same order."""
    chosen = filters or EventFilters()
    chosen = replace(
        chosen,
        target_id=chosen.target_id if target_id is None else target_id,
        action=chosen.action if action is None else action,
        actor=chosen.actor if actor is None else actor,
        since=chosen.since if since is None else since,
    )
    statement = chosen.apply(select(AuditEvent).where(AuditEvent.tenant_id == tenant_id))
    seq = col(AuditEvent.seq)
    if cursor is not None:
        last = decode_cursor(cursor)
        statement = statement.where(seq < last if newest_first else seq > last)
    order = seq.desc() if newest_first else seq
    rows = list(session.exec(statement.order_by(order).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return AuditPage(
        data=[AuditEventPublic.model_validate(row) for row in rows],
        next_cursor=encode_cursor(rows[-1].seq) if more else None,
    )


@dataclass(frozen=True)
class EventFilters:
    """What the console's audit log narrows by; None matches everything."""

    actor: str | None = None
    action: str | None = None
    # An action or its family: "staff" matches "staff.created", "staff.removed", …
    action_family: str | None = None
    target_kind: str | None = None
    target_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def apply(self, statement: Any) -> Any:
        if self.actor is not None:
            statement = statement.where(AuditEvent.actor == self.actor)
        if self.action is not None:
            statement = statement.where(AuditEvent.action == self.action)
        if self.action_family is not None:
            statement = statement.where(
                (col(AuditEvent.action) == self.action_family)
                | col(AuditEvent.action).startswith(self.action_family + ".", autoescape=True))
        if self.target_kind is not None:
            statement = statement.where(AuditEvent.target_kind == self.target_kind)
        if self.target_id is not None:
            statement = statement.where(AuditEvent.target_id == self.target_id)
        if self.since is not None:
            statement = statement.where(col(AuditEvent.created_at) >= self.since)
        if self.until is not None:
            statement = statement.where(col(AuditEvent.created_at) < self.until)
        return statement


def trail(
    session: Session, *, tenant_id: uuid.UUID, target_kind: str, target_id: str | uuid.UUID,
    limit: int = TRAIL_LIMIT,
) -> list[TrailEvent]:
    """The last ``limit`` events about one target, oldest first (a memory's lineage)."""
    rows = session.exec(
        select(AuditEvent)
        .where(AuditEvent.tenant_id == tenant_id, AuditEvent.target_id == str(target_id),
               AuditEvent.target_kind == target_kind)
        .order_by(col(AuditEvent.seq).desc())
        .limit(limit)
    ).all()
    return [TrailEvent.model_validate(row) for row in reversed(rows)]


def first_actors(
    session: Session, *, tenant_id: uuid.UUID, target_kind: str, target_id: str | uuid.UUID,
    detail: str,
) -> dict[str, str]:
    """For each value of ``details[detail]`` among the events about one target, the actor of
    the first event naming it (a memory's versions: who wrote each)."""
    named = col(AuditEvent.details)[detail].astext
    rows = session.exec(
        select(named, AuditEvent.actor)
        .where(AuditEvent.tenant_id == tenant_id, AuditEvent.target_id == str(target_id),
               AuditEvent.target_kind == target_kind, named.is_not(None))
        .order_by(col(AuditEvent.seq))
    ).all()
    first: dict[str, str] = {}
    for value, actor in rows:
        first.setdefault(value, actor)
    return first


def about_targets(
    session: Session, *, tenant_id: uuid.UUID, target_kind: str, target_ids: Sequence[str]
) -> list[AuditEventPublic]:
    """Every event about any of ``target_ids`` (of ``target_kind``), in chain order."""
    if not target_ids:
        return []
    # One array parameter, not one parameter per ID: a subject may have many thousands.
    ids = bindparam("target_ids", list(target_ids), type_=ARRAY(String))
    rows = session.exec(
        select(AuditEvent)
        .where(AuditEvent.tenant_id == tenant_id, AuditEvent.target_kind == target_kind,
               col(AuditEvent.target_id) == any_(ids))
        .order_by(col(AuditEvent.seq))
    ).all()
    return [AuditEventPublic.model_validate(row) for row in rows]


def state_changes_per_day(
    session: Session, *, tenant_id: uuid.UUID, days: int, today: date | None = None
) -> list[tuple[date, int]]:
    """Events that moved something between states, per UTC day, for the last ``days`` days
    ending today (every day named, zeros too), oldest first."""
    last = today or utcnow().date()
    first = last - timedelta(days=days - 1)
    day = func.date(func.timezone("UTC", AuditEvent.created_at))
    rows = session.exec(
        select(day, func.count())
        .where(AuditEvent.tenant_id == tenant_id, col(AuditEvent.to_state).is_not(None),
               col(AuditEvent.created_at) >= datetime.combine(first, time(), UTC))
        .group_by(day)
    ).all()
    counts = {found: count for found, count in rows}
    return [(first + timedelta(days=n), counts.get(first + timedelta(days=n), 0))
            for n in range(days)]


def encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": seq}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        after = json.loads(raw)["after"]
        if not isinstance(after, int) or isinstance(after, bool) or not 0 <= after < 2**63:
            raise ValueError("not a seq")
        return after
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise InvalidCursor("Pass back a `next_cursor` exactly as it was given.") from None
