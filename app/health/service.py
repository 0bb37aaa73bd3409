from __future__ import annotations

import logging

from sqlalchemy import text

from app.core import db
from app.core.migrations import head_revision
from app.embeddings import runtime as embeddings

log = logging.getLogger(__name__)


def database_answers() -> bool:
    try:
        with db.autocommit() as conn:
            conn.execute(text("SELECT 1"))
        return True
    except Exception:
        log.warning("database check failed", exc_info=True)
        return False


def migrations_at_head() -> bool:
    try:
        with db.autocommit() as conn:
            current = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        return bool(current == head_revision())
    except Exception:
        log.warning("migration check failed", exc_info=True)
        return False


def readiness() -> dict[str, bool]:
    database = database_answers()
    return {
        "database": database,
        "migrations": database and migrations_at_head(),
        "embedding_model": embeddings.ready(),
    }
