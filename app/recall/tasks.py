"""Recall's upkeep on beat: the lists index that large subjects are walked through."""

from __future__ import annotations

import logging

from app.core import db
from app.core.celery_app import celery_app
from app.recall import vector_lists

log = logging.getLogger(__name__)


@celery_app.task(name="recall.vector_lists", acks_late=True)
def build_vector_lists() -> int | None:
    """Beat: build the lists index if the table calls for one; its lists if built, else None.
    Overlapping runs build once (an advisory lock; the loser skips)."""
    with db.autocommit(owner=True) as conn:
        built = vector_lists.ensure(db.driver_connection(conn))
    if built is None:
        return None
    log.info("vector lists index built (%s): %d lists over %d versions (replaced: %s)",
             built.reason, built.lists, built.versions, built.replaced)
    return built.lists
