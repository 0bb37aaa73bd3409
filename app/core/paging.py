"""Keyset pages of one tenant's rows, ordered by (created_at, id): the list convention of
docs/api.md (`?limit=`, `?cursor=`, `next_cursor`) in one place.

The cursor is the ID of the last row of the previous page. A cursor that names no row of the
tenant (removed since, or never one) ends the listing with an empty page, rather than
starting it again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import tuple_
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import SelectOfScalar


class Keyed(Protocol):
    id: uuid.UUID
    tenant_id: uuid.UUID
    created_at: datetime


Row = TypeVar("Row", bound=Keyed)


def page(
    session: Session, statement: SelectOfScalar[Row], table: type[Row], *,
    tenant_id: uuid.UUID, limit: int, cursor: str | None, newest_first: bool = False,
) -> tuple[Sequence[Row], str | None]:
    """Up to ``limit`` rows of ``statement`` (a select of ``table``, already filtered) after
    ``cursor``, and the next page's cursor (None on the last page)."""
    order: tuple[Any, Any] = (col(table.created_at), col(table.id))
    if cursor is not None:
        after = _key(session, table, tenant_id=tenant_id, cursor=cursor)
        if after is None:
            return [], None
        statement = statement.where(
            tuple_(*order) < tuple_(*after) if newest_first else tuple_(*order) > tuple_(*after))
    ordering = [column.desc() for column in order] if newest_first else list(order)
    rows = session.exec(statement.order_by(*ordering).limit(limit + 1)).all()
    shown = rows[:limit]
    return shown, str(shown[-1].id) if len(rows) > limit else None


def _key(
    session: Session, table: type[Row], *, tenant_id: uuid.UUID, cursor: str
) -> tuple[datetime, uuid.UUID] | None:
    try:
        row_id = uuid.UUID(cursor)
    except ValueError:
        return None
    row = session.exec(
        select(col(table.created_at), col(table.id)).where(
            col(table.tenant_id) == tenant_id, col(table.id) == row_id)
    ).first()
    return None if row is None else (row[0], row[1])
