"""Forgetting on beat: consolidation of every tenant's near-duplicate memories."""

from __future__ import annotations

import logging
import uuid

from app.core import db
from app.core.celery_app import celery_app
from app.forgetting import consolidation
from app.tenants import service as tenants

log = logging.getLogger(__name__)


@celery_app.task(name="forgetting.consolidate", acks_late=True)
def consolidate_all() -> int:
    """Beat: consolidate every tenant; overlapping runs collapse nothing twice."""
    collapsed = sum(consolidate_tenant(tenant_id) for tenant_id in tenants.all_tenant_ids())
    log.info("consolidation deprecated %d near-duplicate memories", collapsed)
    return collapsed


def consolidate_tenant(tenant_id: uuid.UUID) -> int:
    """One transaction per subject: a large tenant never holds its audit chain lock long."""
    with db.session_scope(tenant_id) as session:
        subjects = consolidation.subjects(session, tenant_id=tenant_id)
    collapsed = 0
    for subject in subjects:
        with db.session_scope(tenant_id) as session:
            collapsed += len(consolidation.consolidate(session, tenant_id=tenant_id,
                                                       subject=subject))
    return collapsed
